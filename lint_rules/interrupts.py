"""Ctrl-C for both command lines: status 130, one line, no traceback, whenever it comes; and a
reader that goes away (`| head`) ends the run quietly too.

The console scripts and `python -m` land here before anything heavy is imported: from then on
SIGINT only sets a flag, and the run stops at the next file (`stop_if_interrupted`), never in the
middle of one (LibCST turns an interrupt in its code generator into a KeyError). Only `signal`
and `gc` are imported here (with the constants of `exit_codes` and `process`) beyond what Python
loads at start-up (no `typing` either), so the window in which Ctrl-C can still raise is Python's
own start-up. Once the command is imported, the garbage collector is set for a run over many
files, and a console script's process ends without tearing its objects down (`process`).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

from lint_rules.exit_codes import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED
from lint_rules.process import collect_rarely, end_process, settle_for_command

_interrupted = False


def run_command(module: str, argv: list[str] | None, message: str) -> int:
    """`module.run(argv)`, with interrupts deferred from before `module` is imported. A console
    script's run (`argv` None: the process's own command line) ends the process there (`end_process`)."""
    status = run_deferred(module, argv, message)
    return end_process(status) if argv is None else status


def run_deferred(module: str, argv: list[str] | None, message: str) -> int:
    defer_interrupts()  # for good: a Ctrl-C while Python exits must not print a traceback either
    try:
        collect_rarely()
        command = importlib.import_module(module)
        settle_for_command()
        status: int = command.run(argv)
        stop_if_interrupted()  # Ctrl-C after the last file still means "interrupted"
    except KeyboardInterrupt:
        print(message, file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return EXIT_BROKEN_PIPE
    return status


def defer_interrupts() -> None:
    """From now on Ctrl-C only notes the interrupt."""
    global _interrupted
    _interrupted = False
    signal.signal(signal.SIGINT, _note_interrupt)


def _note_interrupt(signum: int, frame: object) -> None:
    global _interrupted
    _interrupted = True


def interrupted() -> bool:
    return _interrupted


def stop_if_interrupted() -> None:
    if _interrupted:
        raise KeyboardInterrupt
