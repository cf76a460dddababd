"""The GPU check's bundle (plates.gpu_check.bundle), made as scripts/gpu-bundle.sh makes it: within the device tool's
limit together with the checkout, and its Triton, unpacked alone into a fresh folder, serving this CPU. Its
cpu_answers.json is what that Triton answered: car.jpg's plate among them."""

import json
import tarfile

from readings import CAR_PLATE

from plates.gpu_check.bundle import GPU_PYTHON, TRAVEL_LIMIT_BYTES, build_bundle, local_python


def test_the_bundle_fits_the_device_tool_and_its_triton_alone_reads_car_jpg(tmp_path, samples):
    bundle, data = tmp_path / "bundle", samples.parent
    sizes = build_bundle(bundle, data)
    assert sizes["travel"] <= TRAVEL_LIMIT_BYTES
    assert json.loads((bundle / "manifest.json").read_text())["bytes"] == sizes
    answers = json.loads((bundle / "cpu_answers.json").read_text())
    assert [plate["text"] for plate in answers["samples/car.jpg"]] == [CAR_PLATE]
    assert answers["samples/cat.jpeg"] == []
    e2e = json.loads((data / "e2e.json").read_text())
    assert len(answers) == 2 + len({entry["image"] for entry in e2e})
    with tarfile.open(bundle / "triton.tar.xz") as triton:
        names = triton.getnames()
    stubs = {name.split("/")[-2] for name in names if name.endswith("triton_python_backend_stub")}
    assert stubs == {local_python(), GPU_PYTHON}
    assert not [name for name in names if "icudata" in name]  # the stub stands in for ICU's 29 MB of data
    with tarfile.open(bundle / "site.tar.xz") as site:
        packages = {name.split("/")[0] for name in site.getnames()}
    assert {"numpy", "ultralytics", "tritonclient", "simplejpeg"} <= packages and "bin" not in packages
