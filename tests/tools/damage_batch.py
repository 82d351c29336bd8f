"""Many damages in one process: the damage tools' --batch mode.

Each line of standard input is IMAGE<TAB>KIND; each is applied in turn and
answered on standard output, in order, with IMAGE<TAB>ok<TAB>WHAT (what the
tool changed, on one line) or IMAGE<TAB>error<TAB>MESSAGE (the kind could not
be made on that image; the image may be half changed). A process per damage
cost about 40 ms, and the damage tests make hundreds (issue 43).
"""
import sys


def run(apply):
    """apply(image, kind) -> str: damages image, returns what it changed, raises on failure."""
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        image, kind = line.split("\t")
        try:
            what = " ".join(str(apply(image, kind)).split())
            print("%s\tok\t%s" % (image, what), flush=True)
        except (Exception, SystemExit) as e:  # noqa: BLE001: any failure (the tools raise SystemExit too) is this line's answer
            print("%s\terror\t%s" % (image, " ".join(("%s: %s" % (type(e).__name__, e)).split())), flush=True)
