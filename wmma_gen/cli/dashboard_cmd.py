"""`wmma-gen dashboard`: optuna-dashboard on a sweep's study storage (issue #16).

optuna-dashboard is an optional extra (`pip install 'wmma-gen[dashboard]'`); without it the
command stops with that install line. The storage is opened as the sweep opens it (a journal
file, sqlite:///..., or postgresql://... shared by workers on several hosts), so the dashboard
shows every worker's trials live. Serves on 127.0.0.1 unless --host says otherwise.
"""
from __future__ import annotations

from .ladder_cmd import default_storage
from .options import arch_name, int_at_least, missing_storage, storage_url

INSTALL = "pip install 'wmma-gen[dashboard]' (or: pip install optuna-dashboard)"


def register(sub) -> None:
    p = sub.add_parser("dashboard", help="serve optuna-dashboard on a sweep's study storage (optional extra)")
    p.add_argument("--storage", default="", type=storage_url,
                   help="the sweeps' storage: postgresql://..., sqlite:///FILE.db or a journal file, which must "
                        "exist (default <results>/<arch>/optuna.journal, which needs --arch)")
    p.add_argument("--arch", default=None, type=arch_name, help="for the default journal of this target")
    p.add_argument("--results", default=None,
                   help="where the default journal lives (default: the sweep's, $XDG_DATA_HOME/wmma_gen/results)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int_at_least(1, 65535), default=8080, help="port (default 8080)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..errors import WmmaGenError
    try:
        import optuna_dashboard
    except ImportError:
        raise WmmaGenError(f"optuna-dashboard is not installed: {INSTALL}") from None
    from autotune.storage import open_storage, shown
    url = default_storage(args)
    why = missing_storage(url)
    if why:
        from ..errors import ScheduleError
        raise ScheduleError("--storage", url, why)
    storage = open_storage(url)
    print(f"optuna-dashboard {optuna_dashboard.__version__} on {shown(url)}: http://{args.host}:{args.port}/ "
          "(Ctrl-C stops it)", flush=True)
    try:
        optuna_dashboard.run_server(storage, host=args.host, port=args.port)
    except OSError as e:     # the port is taken, or the address is not ours
        raise WmmaGenError(f"cannot serve on {args.host}:{args.port}: {e.strerror or e}; pick another --port") from None
    except KeyboardInterrupt:
        pass
    return 0
