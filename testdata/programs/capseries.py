"""What the Python capture programs in this folder share: the median and
spread of a series of timings, printed in the same two lines as the CUDA
programs' (cap_common.h)."""
import statistics


def print_series(label, ms):
    """Print every timing of the series, then its median, min, max and count."""
    print(f"{label} ms: " + " ".join(f"{x:.3f}" for x in ms))
    print(f"{label} median {statistics.median(ms):.3f} ms "
          f"(min {min(ms):.3f}, max {max(ms):.3f}, n {len(ms)})")
