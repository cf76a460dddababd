"""Overload on the real server, Triton direct: a burst beyond what is served waits in plate_recognition's queue, in
its order, instead of being refused at once (a refusal that a careless client answers by sending again at once would
cost the cores the answers need); what comes beyond the queue's places is refused, and a client's retry gets in.
"""

from __future__ import annotations

import threading
import time

import cv2
import numpy as np
from readings import CAR_PLATE

from plates.client.readiness import is_ready
from plates.client.retry import NO_RETRY, RetryPolicy
from plates.client.service import PlatesClient
from plates.exceptions import OverloadedError, ServerUnavailableError

THREADS = 16  # well over what plate_recognition serves at once (1 served, 1 waiting its turn)
PER_THREAD = 3
QUEUE_PLACES = 128  # plate_recognition's max_queue_size


def burst(url: str, image: np.ndarray, threads: int, per_thread: int, stop: threading.Event | None = None):
    """Send from `threads` threads at once, without retries; (seconds, plates or the error's text) of each request. A
    sender whose photo outlived its client's timeout under the burst records it and goes on, as a careless client
    would. The text, not the error: its traceback holds the request's pixels, and a burst beyond the queue's places
    is refused thousands of times (kept whole, they filled 21 GB)."""
    results, lock, start = [], threading.Lock(), threading.Barrier(threads)

    def worker() -> None:
        with PlatesClient(url, timeout=30, retry=NO_RETRY) as client:
            start.wait()
            for _ in range(per_thread):
                if stop is not None and stop.is_set():
                    return
                sent = time.perf_counter()
                try:
                    answer = client.recognize(image)
                except ServerUnavailableError as refusal:
                    answer = f"{type(refusal).__name__}: {refusal}"
                with lock:
                    results.append((time.perf_counter() - sent, answer))

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    return workers, results


def test_a_burst_within_the_queues_places_waits_its_turn_and_is_never_refused(triton_url, samples):
    image = cv2.imread(str(samples / "car.jpg"))
    workers, results = burst(triton_url, image, THREADS, PER_THREAD)
    for thread in workers:
        thread.join(timeout=120)
    assert len(results) == THREADS * PER_THREAD
    refused = [answer for _, answer in results if isinstance(answer, str)]
    print(f"{len(results)} photos from {THREADS} senders at once, median {np.median([s for s, _ in results]):.1f} s")
    assert not refused, refused[0]
    assert all(CAR_PLATE in [p.text for p in answer] for _, answer in results)
    assert is_ready(triton_url)


def test_plates_client_retries_a_refusal_and_then_reads_the_plate(triton_url, samples):
    image = cv2.imread(str(samples / "car.jpg"))
    tries, readings = [], []
    # Admitted, its photo waits behind up to 128 others: about 10 s here alone, a minute with a heavy job beside.
    with PlatesClient(triton_url, timeout=180, retry=RetryPolicy(tries=50, max_pause_s=0.5)) as client:
        infer = client._infer
        stop = threading.Event()

        def counted(*args):
            tries.append(1)
            try:
                return infer(*args)
            except OverloadedError:
                # The refusal was seen: the burst ends, so that the retries find room. A burst that kept refilling
                # the queue would starve them instead, as it would any client.
                stop.set()
                raise

        client._infer = counted
        for _ in range(10):  # until a request was refused at least once
            # More senders than the queue has places, each sending again as soon as it is answered or refused,
            # keep it full; the client's photo comes while they do.
            stop.clear()
            workers, _ = burst(triton_url, image, QUEUE_PLACES + 16, 200, stop)
            time.sleep(0.5)
            before = len(tries)
            try:
                readings.append(client.recognize(image))
            finally:
                # Also where the client failed: a burst left running would overload the tests after this one.
                stop.set()
                for thread in workers:
                    thread.join(timeout=120)
            if len(tries) - before > 1:
                break
    assert len(tries) > len(readings), "no request was refused: the server was not overloaded"
    assert all(CAR_PLATE in [p.text for p in plates] for plates in readings)
    assert is_ready(triton_url)
