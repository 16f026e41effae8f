"""Stream capture on a HipDevice (HIP graphs: what serving stacks such as vLLM capture decode in).

    dev.begin_capture(stream=None, mode="global")   hipStreamBeginCapture on the caller's stream
    graph = dev.end_capture(stream=None)            hipStreamEndCapture + hipGraphInstantiate
    graph.launch(stream=None); graph.close()        hipGraphLaunch; hipGraphExecDestroy + hipGraphDestroy
    dev.is_capturing(stream=None)                   hipStreamIsCapturing

While a stream captures, wmma_gen's ops make only kernel launches on it (docs/pytorch.md, graph
capture); HIP refuses allocations, copies, syncs and module loads in global mode. Every
buffer an op hands a kernel during the capture is kept alive by the graph (`graph.keep_alive`,
device/operand.py capture_keep): replays write them, so none may be freed while the graph lives.
"""
from __future__ import annotations

from ..errors import DeviceError
from .hip_call import hip_check
from .operand import start_keep, stop_keep


class HipGraph:
    """An instantiated captured graph (HipDevice.end_capture): launch() replays it on a stream."""

    def __init__(self, hip, graph, exe, stream, keep_alive=()):
        self.hip, self.graph, self.exe, self.stream = hip, graph, exe, stream
        self.keep_alive = list(keep_alive)   # every buffer the captured kernels name (released by close)

    def launch(self, stream=None) -> None:
        hip_check(self.hip, self.hip.hipGraphLaunch(self.exe, self.stream if stream is None else stream),
               "hipGraphLaunch")

    def close(self) -> None:
        if self.exe is not None:
            self.hip.hipGraphExecDestroy(self.exe)
            self.hip.hipGraphDestroy(self.graph)
            self.exe = self.graph = None
            self.keep_alive = []


class HipCapture:
    """The capture calls of HipDevice (which provides hip and stream)."""

    def begin_capture(self, stream=None, mode: str = "global") -> None:
        """hipStreamBeginCapture on `stream` (None: this device's): launches on it are recorded
        into a graph instead of run, until end_capture."""
        modes = {"global": 0, "thread_local": 1, "relaxed": 2}
        if mode not in modes:
            raise DeviceError(f"capture mode={mode!r} is not allowed: one of {', '.join(modes)}")
        hip_check(self.hip, self.hip.hipStreamBeginCapture(self.stream if stream is None else stream,
                                                        self.hip.hipStreamCaptureMode(modes[mode])),
               "hipStreamBeginCapture")
        start_keep()

    def end_capture(self, stream=None) -> "HipGraph":
        """hipStreamEndCapture + hipGraphInstantiate: the captured work as a graph to replay."""
        keep = stop_keep()
        graph = hip_check(self.hip, self.hip.hipStreamEndCapture(self.stream if stream is None else stream),
                       "hipStreamEndCapture")
        try:
            exe = hip_check(self.hip, self.hip.hipGraphInstantiate(graph, 0), "hipGraphInstantiate")[0]
        except DeviceError:
            self.hip.hipGraphDestroy(graph)
            raise
        return HipGraph(self.hip, graph, exe, self.stream, keep)

    def is_capturing(self, stream=None) -> bool:
        status = hip_check(self.hip, self.hip.hipStreamIsCapturing(self.stream if stream is None else stream),
                        "hipStreamIsCapturing")
        return int(getattr(status, "value", status)) != 0
