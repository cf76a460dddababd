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
