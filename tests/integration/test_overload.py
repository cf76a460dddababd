"""Overload on the real server, Triton direct: a burst beyond what is served waits in plate_recognition's queue, in
its order, instead of being refused at once (a refusal that a careless client answers by sending again at once would
cost the cores the answers need); what waits past the queue's timeout is refused then, and a client's retry gets in.
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
from plates.exceptions import OverloadedError

THREADS = 16  # well over what plate_recognition serves at once (1 served, 1 waiting its turn)
PER_THREAD = 3
QUEUE_TIMEOUT_S = 2.0  # plate_recognition's default_timeout_microseconds


def burst(url: str, image: np.ndarray, threads: int, per_thread: int, stop: threading.Event | None = None):
    """Send from `threads` threads at once, without retries; (seconds, plates or OverloadedError) of each request."""
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
                except OverloadedError as refusal:
                    answer = refusal
                with lock:
                    results.append((time.perf_counter() - sent, answer))

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    return workers, results


def test_a_burst_waits_its_turn_and_what_is_refused_was_refused_only_after_the_queues_timeout(triton_url, samples):
    image = cv2.imread(str(samples / "car.jpg"))
    workers, results = burst(triton_url, image, THREADS, PER_THREAD)
    for thread in workers:
        thread.join(timeout=120)
    assert len(results) == THREADS * PER_THREAD
    refused = [s for s, answer in results if isinstance(answer, OverloadedError)]
    accepted = [(s, answer) for s, answer in results if not isinstance(answer, OverloadedError)]
    print(
        f"{len(accepted)} accepted, median {np.median([s for s, _ in accepted]) * 1000:.0f} ms; "
        f"{len(refused)} refused" + (f", the fastest in {min(refused) * 1000:.0f} ms" if refused else "")
    )
    assert len(accepted) >= THREADS  # each sender's first photo at least: they waited instead of being refused
    assert all(CAR_PLATE in [p.text for p in answer] for _, answer in accepted)
    # Never refused at once: a refusal comes when the photo's time in the queue is up, not before.
    assert all(seconds >= QUEUE_TIMEOUT_S * 0.9 for seconds in refused), refused
    assert is_ready(triton_url)


def test_plates_client_retries_a_refusal_and_then_reads_the_plate(triton_url, samples):
    image = cv2.imread(str(samples / "car.jpg"))
    tries, readings = [], []
    with PlatesClient(triton_url, timeout=60, retry=RetryPolicy(tries=50, max_pause_s=0.5)) as client:
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
            # Sixty senders, each sending again as soon as it is answered, keep more photos in plate_recognition's
            # queue than it reads within the queue's timeout; the client's photo comes while they do.
            stop.clear()
            workers, _ = burst(triton_url, image, 60, 200, stop)
            time.sleep(0.5)
            before = len(tries)
            readings.append(client.recognize(image))
            stop.set()
            for thread in workers:
                thread.join(timeout=120)
            if len(tries) - before > 1:
                break
    assert len(tries) > len(readings), "no request was refused: the server was not overloaded"
    assert all(CAR_PLATE in [p.text for p in plates] for plates in readings)
    assert is_ready(triton_url)
