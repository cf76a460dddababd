"""plates bench's memory lines: a process whose memory read 0 at the start is named, never divided by."""

from plates.server.process_memory import ProcessMemory, format_growth

MIB = 1024 * 1024


def test_a_process_that_read_zero_at_the_start_is_named_not_divided_by():
    before = {10: ProcessMemory(10, "tritonserver", 40 * MIB), 11: ProcessMemory(11, "stub yolo", 0)}
    after = {10: ProcessMemory(10, "tritonserver", 44 * MIB), 11: ProcessMemory(11, "stub yolo", 500 * MIB)}
    lines = format_growth(before, after).splitlines()
    assert (
        "stub yolo" in lines[1] and "pid      11: RSS unreadable at the start (0 B), 500.0 MiB at the end" in lines[1]
    )
    assert lines[0].endswith("RSS 40.0 -> 44.0 MiB (+10.0%)")
    assert lines[2].split(":")[1].strip().startswith("RSS 40.0 -> 544.0 MiB")
