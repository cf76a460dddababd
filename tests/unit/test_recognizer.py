"""The served STN + LPRNet (this project's weights), run eagerly on real crops: crops, networks and decoding together,
no server; and what loading the pretrained reference's checkpoints does to them."""

import numpy as np
import pytest
import torch
from readings import CAR_PLATE

from plates.build.repository import load_network, trace_checked
from plates.build.weights import find_weights
from plates.nets import LPRNet, SpatialTransformer
from plates.nets.lprnet import ChannelStridedMaxPool
from plates.photos.files import read_image
from plates.recognition.crops import DEFAULT_VARIANTS, prepare_crops
from plates.recognition.ctc import read_plates, vote


@pytest.fixture(scope="module")
def networks():
    return (
        load_network(SpatialTransformer, find_weights("plates_stn.pt")),
        load_network(LPRNet, find_weights("plates_lprnet.pt")),
    )


@pytest.fixture(scope="module")
def pretrained(samples):
    weights = samples.parent.parent / "weights"
    return load_network(SpatialTransformer, weights / "stn.pth"), load_network(LPRNet, weights / "lprnet.pth")


@pytest.mark.parametrize(
    ("photo", "box", "text"),
    [
        ("detect/images/val/ds_139.jpg", [1115, 551, 1270, 621], "H001XT177"),
        ("detect/images/val/ds_206.jpg", [653, 415, 894, 471], "X777AM777"),
    ],
)
def test_recognizer_reads_labelled_plates_from_their_boxes(samples, networks, photo, box, text):
    stn, lprnet = networks
    crops = torch.from_numpy(prepare_crops(read_image(samples.parent / photo), np.array([box])))
    with torch.no_grad():
        logits = lprnet(stn(crops))
    assert logits.shape == (1, 23, 18)
    assert read_plates(logits.numpy())[0].text == text


def test_recognizer_reads_the_sample_car_from_its_reference_box(samples, networks):
    # The plate is 38 px wide in a 780x439 photo, enlarged 2.46 times to the frame: its C and K are a few pixels.
    stn, lprnet = networks
    crops = torch.from_numpy(
        prepare_crops(read_image(samples / "car.jpg"), np.array([[94, 331, 132, 342]]), DEFAULT_VARIANTS)
    )
    with torch.no_grad():
        logits = lprnet(stn(crops))
    assert vote(read_plates(logits.numpy()), len(DEFAULT_VARIANTS))[0].text == CAR_PLATE


def test_traced_networks_match_eager_for_any_batch_size(networks):
    for network in networks:
        traced = trace_checked(network, "network")
        batch = torch.randn(7, 3, 24, 94)
        with torch.no_grad():
            assert torch.allclose(traced(batch), network(batch), atol=1e-4)


def test_traced_networks_run_channels_last_and_answer_contiguous_tensors(networks):
    # Channels last is what makes them fast on CPU; Triton takes their outputs as flat buffers.
    for network in networks:
        traced = trace_checked(network, "network")
        convolutions = [p for p in traced.parameters() if p.dim() == 4 and p.shape[-1] * p.shape[-2] > 1]
        assert convolutions
        assert all(p.is_contiguous(memory_format=torch.channels_last) for p in convolutions)
        with torch.no_grad():
            assert traced(torch.randn(3, 3, 24, 94)).is_contiguous()
    # The caller's network stays as it was: training goes on with its own layout.
    assert all(p.is_contiguous() for network in networks for p in network.parameters())


def test_lprnet_reads_a_plate_the_same_whatever_is_batched_with_it(networks):
    # Triton's dynamic batching joins requests: one plate's logits must not depend on the others.
    _, lprnet = networks
    torch.manual_seed(0)
    plate = torch.randn(1, 3, 24, 94)
    others = torch.randn(3, 3, 24, 94) * 3
    with torch.no_grad():
        alone = lprnet(plate)
        batched = lprnet(torch.cat([plate, others]))[:1]
    # Batch-wide normalisation would move these logits by whole units; what is left is float rounding.
    torch.testing.assert_close(alone, batched, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("stride", [(1, 1, 1), (2, 1, 2), (4, 1, 2)])
def test_channel_strided_max_pool_is_the_reference_3d_max_pool(stride):
    torch.manual_seed(0)
    features = torch.randn(5, 128, 20, 90)
    reference = torch.nn.MaxPool3d(kernel_size=(1, 3, 3), stride=stride)
    assert torch.equal(ChannelStridedMaxPool(stride)(features), reference(features))


def test_loaded_weights_hold_no_subnormals_and_read_as_before(samples, pretrained):
    # Zeroing the STN's subnormal weights is what makes it fast on CPU; it must not move its output.
    stn, _ = pretrained
    tiny = torch.finfo(torch.float32).tiny
    assert all(not ((p != 0) & (p.abs() < tiny)).any() for p in stn.parameters())
    as_shipped = SpatialTransformer().eval()
    state = torch.load(samples.parent.parent / "weights" / "stn.pth", map_location="cpu", weights_only=True)
    as_shipped.load_state_dict(state["net_state_dict"])
    assert any(((p != 0) & (p.abs() < tiny)).any() for p in as_shipped.parameters())
    torch.manual_seed(0)
    crops = torch.randn(4, 3, 24, 94)
    with torch.no_grad():
        torch.testing.assert_close(stn(crops), as_shipped(crops), atol=1e-6, rtol=0)
