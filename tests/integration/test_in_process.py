import numpy as np
from readings import CAR_PLATE

from plates.build.paths import DEFAULT_REPOSITORY
from plates.inference.in_process import STAGES, InProcessPipeline


def test_in_process_pipeline_reads_car_jpg_as_the_server_does_and_times_every_stage(samples):
    pipeline = InProcessPipeline(DEFAULT_REPOSITORY)
    plates, seconds = pipeline.recognize((samples / "car.jpg").read_bytes())
    assert CAR_PLATE in plates.texts
    assert plates.candidates.shape == (len(plates.texts), pipeline.settings.candidates)
    assert list(seconds) == list(STAGES) and all(s >= 0 for s in seconds.values())
    assert seconds["detector"] > 0 and seconds["lprnet"] > 0


def test_in_process_pipeline_answers_no_plate_without_reading(samples):
    plates, seconds = InProcessPipeline(DEFAULT_REPOSITORY).recognize((samples / "cat.jpeg").read_bytes())
    assert plates.texts == [] and plates.boxes.shape == (0, 4)
    assert seconds["stn"] == seconds["lprnet"] == 0.0 and np.isfinite(seconds["reading"])


def test_a_tilted_plate_is_read_levelled_where_upright_it_is_misread(samples, tmp_path):
    """H646XT190 (labels/, a val plate): 255 px wide and tilted near 30 degrees, boxed about as wide as tall; cut
    upright it reads nothing a plate allows with any confidence, levelled (yolo's level_below) it reads right."""
    from plates.build.repository import set_parameter
    from plates.server.candidates import copy_repository

    photo = samples.parent / "rfplates/scenes/images/5675_jpg.rf.ab346feada10d5994bb5870b46286bfd.jpg"
    upright = copy_repository(tmp_path / "upright")
    set_parameter(upright / "yolo" / "config.pbtxt", "level_below", "0")
    assert "H646XT190" in InProcessPipeline(DEFAULT_REPOSITORY).recognize(photo.read_bytes())[0].texts
    assert "H646XT190" not in InProcessPipeline(upright).recognize(photo.read_bytes())[0].texts
