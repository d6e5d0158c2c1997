"""The timing helpers the benchmarks share: the best of a few runs, in wall seconds or in CPU seconds per call."""
import time


def best_seconds(func, *args, repeat=3):
    "Call `func(*args)` `repeat` times; return the shortest wall time in seconds."
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func(*args)
        best = min(best, time.perf_counter() - start)
    return best


def cpu_per_call(fn, min_time=0.2, repeats=3):
    "Best-of-`repeats` CPU seconds per call, each repeat looping until `min_time` CPU seconds have passed."
    best = float("inf")
    for _ in range(repeats):
        n, start = 0, time.process_time()
        while True:
            out = fn()
            n += 1
            spent = time.process_time() - start
            if spent >= min_time:
                break
        best = min(best, spent / n)
    return best, out
