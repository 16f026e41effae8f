"""Stream capture and graphs in the HIP stand-in (runtime.py's module doc says what is modelled).

hip_runtime_api.h: hipStreamBeginCapture(stream, hipStreamCaptureMode), hipStreamEndCapture(stream,
hipGraph_t*), hipStreamIsCapturing(stream, hipStreamCaptureStatus*) (None 0, Active 1, Invalidated 2),
hipGraphInstantiate(hipGraphExec_t*, graph, errorNode*, log, logSize), hipGraphLaunch(exec, stream).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

CAPTURE_MODES = {0: "global", 1: "thread_local", 2: "relaxed"}   # hipStreamCaptureMode


@dataclass
class Capture:
    """One active stream capture: its mode and the nodes recorded so far."""
    mode: str
    nodes: list
    invalid: str = ""       # why the capture was invalidated ("" while valid)


class CaptureCalls:
    """The capture entry points of EmuHipRuntime (which provides _stream, _handles, _execute, _copy)."""

    def hipStreamBeginCapture(self, stream, mode):
        self._stream(stream)
        if not stream:
            raise _err("hipErrorStreamCaptureUnsupported", "the null stream cannot be captured")
        if mode not in CAPTURE_MODES:
            raise _err("hipErrorInvalidValue", f"capture mode {mode}")
        if stream in self.captures:
            raise _err("hipErrorIllegalState", "the stream is already capturing")
        self.captures[stream] = Capture(CAPTURE_MODES[mode], [])

    def hipStreamEndCapture(self, stream, out_graph):
        self._stream(stream)
        cap = self.captures.pop(stream or 0, None)
        if cap is None:
            raise _err("hipErrorIllegalState", "the stream is not capturing")
        if cap.invalid:
            raise _err("hipErrorStreamCaptureInvalidated", cap.invalid)
        handle = next(self._handles)
        self.graphs[handle] = tuple(cap.nodes)
        _put_handle(out_graph, ctypes.c_void_p, handle)

    def hipStreamIsCapturing(self, stream, out_status):
        self._stream(stream)
        cap = self.captures.get(stream or 0)
        _put_handle(out_status, ctypes.c_int, 0 if cap is None else 2 if cap.invalid else 1)

    def hipGraphInstantiate(self, out_exec, graph, error_node, log, log_size):
        if graph not in self.graphs:
            raise _err("hipErrorInvalidValue", "unknown graph")
        handle = next(self._handles)
        self.execs[handle] = self.graphs[graph]
        _put_handle(out_exec, ctypes.c_void_p, handle)

    def hipGraphLaunch(self, exec_, stream):
        self._stream(stream)
        nodes = self.execs.get(exec_)
        if nodes is None:
            raise _err("hipErrorInvalidValue", "unknown executable graph")
        for kind, node in nodes:
            if kind == "kernel":
                function, grid, block, shared, seg, form = node
                self._execute(function, grid, block, shared, stream, seg, form)
            else:
                self._copy(*node)

    def hipGraphExecDestroy(self, exec_):
        if self.execs.pop(exec_, None) is None:
            raise _err("hipErrorInvalidValue", "unknown executable graph")

    def hipGraphDestroy(self, graph):
        if self.graphs.pop(graph, None) is None:
            raise _err("hipErrorInvalidValue", "unknown graph")

    def graph_nodes(self, graph_or_exec: int) -> tuple[str, ...]:
        """The node kinds ("kernel" | "copy") of a graph or executable graph, in order."""
        nodes = self.graphs.get(graph_or_exec, self.execs.get(graph_or_exec, ()))
        return tuple(kind for kind, _ in nodes)


def _err(name: str, reason: str = ""):
    from .runtime import HipStubError
    return HipStubError(name, reason)


def _put_handle(addr: int, ctype, value) -> None:
    from .runtime import _put
    _put(addr, ctype, value)
