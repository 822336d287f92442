"""``memory()``: live tensors and bytes per backend, so that leaks are testable."""
from . import registry


def memory() -> dict:
    """{backend name: {"tensors": n, "bytes": b, ...}} for every backend started so far
    (GPU backends add "pooled" and "in_use" bytes).

    >>> import webgrad as wg
    >>> "cpu" in wg.memory()
    True
    """
    return {name: be.memory() for name, be in list(registry._backend_instances.items())}
