"""The one timing helper the benchmarks share: the best of a few runs, in wall seconds."""
import time


def best_seconds(func, *args, repeat=3):
    "Call `func(*args)` `repeat` times; return the shortest wall time in seconds."
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func(*args)
        best = min(best, time.perf_counter() - start)
    return best
