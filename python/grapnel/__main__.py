"""``python -m grapnel ARGS`` (and the ``grapnel`` command a pip install puts
on PATH): runs the grapnel CLI that goes with the loaded library
(``_lib.cli_path()``: the package's own ``grapnel/bin/grapnel`` first), with
the same arguments, exit status and output."""
import os
import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    from . import _lib

    args = sys.argv[1:] if argv is None else list(argv)
    cli = _lib.cli_path()
    if cli is None:
        sys.stderr.write("grapnel: the grapnel command was not found next to the library "
                         f"({_lib.path}) nor on PATH\n")
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cli, ["grapnel"] + args)
    return 1   # not reached


if __name__ == "__main__":
    sys.exit(main())
