"""A repeat call routed to a HipDevice over the HIP stand-in (tests/hipstub) on a fresh stream:
what the zero-copy tests of the paged torch front ends observe."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Repeat:
    out: object           # what the second call returned
    calls: dict           # HIP API name -> how often the second call made it
    launches: list        # the stand-in's launch records of the second call
    stream: int           # the stream both calls ran on


def repeat_on_a_stream(stub, call, first=None) -> Repeat:
    """first() (default: call) once -- compile, plan, record -- then call(), observed; the device
    and stream are closed after."""
    from wmma_gen.device.hip import HipDevice
    from wmma_gen.device.select import routed
    from wmma_gen.torch import launch_stream
    dev = HipDevice()
    _, stream = dev.hip.hipStreamCreate()
    try:
        with routed(dev), launch_stream(int(stream)):
            (first or call)()
            n, before = len(stub.launches), dict(stub.calls)
            out = call()
        calls = {c: m - before.get(c, 0) for c, m in stub.calls.items() if m - before.get(c, 0)}
        return Repeat(out, calls, stub.launches[n:], int(stream))
    finally:
        dev.hip.hipStreamDestroy(stream)
        dev.close()
