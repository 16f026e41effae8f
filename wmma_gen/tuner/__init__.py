"""The tuner's op-agnostic base, below ops/ (issue 39): the search space a knob table makes
(space.py), the staged objective and the one derived from an OpSpec (objective.py), GPU timing
through the launcher (timing.py), the row type of a problem file (rows.py) and the export stamp.
An op's tuning.py builds on these; the sweep machinery (studies, storage, ladder, export) stays
in the repository's autotune/ package, which imports this one and never the other way."""
from __future__ import annotations

import datetime as _dt


def stamp() -> str:
    """The UTC time an exported schedule document or ladder records as `generated`."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
