"""Compile-pool stand-ins for the sweep tests (module-level, so worker processes can import
them). hang_on_default / crash_on_default: the default Schedule()'s compile hangs or kills
its worker; any other schedule's job returns at once without compiling (the sweep process
then compiles it itself, a cache miss), so a short time limit is never met by a real compile
on a loaded host."""
import json
import os
import time

from wmma_gen.ops.gemm.schedule import Schedule

VICTIM = Schedule().to_dict()


def hang_on_default(op, directive, schedule_json, arch):
    if json.loads(schedule_json) == VICTIM:
        time.sleep(3600)
    return 0.001


def crash_on_default(op, directive, schedule_json, arch):
    if json.loads(schedule_json) == VICTIM:
        os._exit(3)
    return 0.001


def double(x):
    return 2 * x


def sleep_forever(x):
    time.sleep(3600)


def exit_with(code):
    os._exit(code)


def fail_with(text):
    raise ValueError(text)
