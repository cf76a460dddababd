from plates.server.processes import ProcessMemory, format_growth, server_processes

MIB = 1024 * 1024


def test_growth_is_given_per_process_and_in_all_with_gone_and_new_ones_named():
    before = {1: ProcessMemory(1, "tritonserver", 100 * MIB), 2: ProcessMemory(2, "stub yolo", 300 * MIB)}
    after = {1: ProcessMemory(1, "tritonserver", 104 * MIB), 3: ProcessMemory(3, "stub yolo", 310 * MIB)}
    lines = format_growth(before, after).splitlines()
    assert "tritonserver" in lines[0] and "RSS 100.0 -> 104.0 MiB (+4.0%)" in lines[0]
    assert "exited during the run (RSS 300.0 MiB)" in lines[1]
    assert "started during the run, RSS 310.0 MiB" in lines[2]
    assert lines[3].split()[0] == "all" and "RSS 400.0 -> 414.0 MiB (+3.5%)" in lines[3]


def test_a_server_on_another_machine_has_no_visible_processes():
    assert server_processes("http://triton.example:8000") == []
