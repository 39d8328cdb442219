"""What `host_drift.py` and `interleaved_rounds.py` share: ResNet-18 (or any model) loaded in
megenginelite as `compare`'s CPU-time rounds run it, and busy processes beside it."""
import contextlib
import os
import subprocess


def warmed_network(model):
    """MODEL loaded at 1 thread with the engine's worker sleeping when idle, its inputs fed
    random floats (seed 0), and run twice."""
    os.environ["MGB_WORKER_MAX_SPIN"] = "1"  # read by the engine as its worker starts
    import numpy as np
    from megenginelite import LiteConfig, LiteNetwork

    net = LiteNetwork(config=LiteConfig())
    net.threads_number = 1
    net.load(model)
    for name in net.get_all_input_name():
        tensor = net.get_io_tensor(name)
        shape = tensor.layout.shapes[: tensor.layout.ndim]
        tensor.set_data_by_copy(np.random.RandomState(0).rand(*shape).astype("float32"))
    for _ in range(2):
        net.forward()
        net.wait()
    return net


@contextlib.contextmanager
def burning(count):
    """COUNT processes burning the CPU for as long as the block runs, as bench/lib.sh's
    `start_burners` does for the shell scripts."""
    burners = [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(count)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
