"""The private channel: JSON header + raw bytes, validated before it is trusted, with deadlines."""
import os
import time

import pytest
import torch

from environment.evaluation.transport import frames


def _pipe_with(data: bytes):
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return r


def test_tensors_round_trip_bit_exactly():
    ts = [torch.randn(3, 5), torch.arange(7, dtype=torch.int64), torch.randn(4).to(torch.bfloat16)]
    r = _pipe_with(frames.encode({"nonce": "n", "kind": "x"}, ts))
    header, out = frames.read_frame(r, "n", time.monotonic() + 5)
    assert header["kind"] == "x"
    for a, b in zip(ts, out):
        assert a.dtype == b.dtype and torch.equal(a, b)


def test_a_frame_with_another_runs_nonce_is_refused():
    r = _pipe_with(frames.encode({"nonce": "forged"}))
    with pytest.raises(frames.FrameError, match="nonce"):
        frames.read_frame(r, "real", time.monotonic() + 5)


def test_bad_magic_and_lying_sizes_are_refused():
    with pytest.raises(frames.FrameError, match="magic"):
        frames.read_frame(_pipe_with(b"XXXX\0\0\0\0"), None, time.monotonic() + 5)
    data = bytearray(frames.encode({"nonce": "n"}, [torch.zeros(4)]))
    data = data.replace(b'"nbytes": 16', b'"nbytes": 99')
    with pytest.raises(frames.FrameError, match="nbytes"):
        frames.read_frame(_pipe_with(bytes(data)), "n", time.monotonic() + 5)


def test_a_silent_peer_hits_the_deadline_instead_of_hanging():
    r, w = os.pipe()
    start = time.monotonic()
    with pytest.raises(frames.Deadline):
        frames.read_frame(r, None, time.monotonic() + 0.3)
    assert time.monotonic() - start < 2
    os.close(w)
    os.close(r)


def test_a_closed_channel_is_reported_as_closed():
    with pytest.raises(frames.ChannelClosed) as caught:
        frames.read_frame(_pipe_with(frames.encode({"nonce": "n"})[:6]), "n", time.monotonic() + 5)
    assert not isinstance(caught.value, frames.ClosedIdle)  # cut mid-frame: a failure, not an ending


def test_a_channel_closed_between_frames_is_an_ending_not_a_cut_frame():
    with pytest.raises(frames.ClosedIdle):
        frames.read_frame(_pipe_with(b""), "n", time.monotonic() + 5)


def test_encode_header_is_the_header_encode_writes_with_the_per_tensor_metadata():
    ts = [torch.randn(3, 5), torch.randn(4).to(torch.bfloat16)]
    frame = frames.encode({"nonce": "n"}, ts)
    head = frames.encode_header({"nonce": "n"}, ts)
    assert frame[len(frames.MAGIC) + 4:len(frames.MAGIC) + 4 + len(head)] == head
    many = [torch.zeros(1)] * (frames.MAX_HEADER // 40)  # small header, but one metadata record per tensor
    with pytest.raises(frames.FrameError, match="frame header"):
        frames.encode_header({"nonce": "n"}, many)
