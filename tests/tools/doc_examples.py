#!/usr/bin/env python3
"""Runs the examples of docs/*.md and compares their output with the page.

usage: doc_examples.py FSIMG DOCS_DIR WORK_DIR [PAGE...]

A fenced block is an example to check when the line before its opening fence
is an HTML comment `<!-- example: FIXTURE -->`. FIXTURE names a function of
tests/tools/doc_fixtures.sh that prepares the files the example reads (in a
folder of its own, once, then copied into a fresh folder for each example;
`none` prepares nothing). In the block, a line starting with
`$ ` is a command (run by bash in that folder, `fsimg` being the binary under
test, stdout and stderr together); the lines up to the next command or the
fence are its expected output. In expected output, a line `...` stands for
any number of lines, and a line ending in `...` for any line starting with
what precedes it. Trailing spaces are ignored.

Prints one line per failing command with a diff, and a summary; exits 1 when
any example failed, or when a command page (fsimg-COMMAND has a page) has no
checked example.
"""
import difflib, os, re, shutil, subprocess, sys

COMMAND_PAGES = ["mkfs", "disk", "fsck", "dump", "ls", "cat", "extract", "slack", "cp", "rm", "mkdir", "mv", "label", "attrib", "undo"]


def blocks(path):
    """Yields (fixture, line number, lines) for each marked block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^<!-- example: ([a-z0-9-]+) -->$", lines[i].strip())
        if m and i + 1 < len(lines) and lines[i + 1].startswith("```"):
            j = i + 2
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield m.group(1), i + 3, lines[i + 2:j]
            i = j
        i += 1


def matches(expected, actual):
    """Expected lines with `...` wildcards against actual lines."""
    exp = [e.rstrip() for e in expected]
    act = [a.rstrip() for a in actual]

    def rec(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i].strip() == "...":
            return any(rec(i + 1, k) for k in range(j, len(act) + 1))
        if j == len(act):
            return False
        if exp[i].endswith("...") and act[j].startswith(exp[i][:-3]):
            return rec(i + 1, j + 1)
        return exp[i] == act[j] and rec(i + 1, j + 1)

    return rec(0, 0)


def main():
    fsimg, docs, work = sys.argv[1:4]
    pages = sys.argv[4:] or sorted(f for f in os.listdir(docs) if f.endswith(".md"))
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doc_fixtures.sh")
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir, exist_ok=True)
    link = os.path.join(bindir, "fsimg")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.path.abspath(fsimg), link)
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], LC_ALL="C.UTF-8", TZ="UTC",
               SOURCE_DATE_EPOCH="1700000000", COLUMNS="80")
    failed = checked = 0
    covered = set()
    prepared = {}  # fixture -> None when made (in WORK/fixtures/NAME), else its error
    for page in pages:
        for n, (fixture, line, body) in enumerate(blocks(os.path.join(docs, page))):
            folder = os.path.join(work, f"{page}-{n}")
            shutil.rmtree(folder, ignore_errors=True)
            if fixture != "none":
                # Each fixture is prepared once and copied into each example's folder (cp -a keeps the
                # holes it has, not more, and times): 17 fixtures serve 46 examples (issue 43).
                if fixture not in prepared:
                    made = os.path.join(work, "fixtures", fixture)
                    shutil.rmtree(made, ignore_errors=True)
                    os.makedirs(made)
                    r = subprocess.run(["bash", "-c", f". '{fixtures}' && {fixture.replace('-', '_')}"], cwd=made,
                                       env=env, capture_output=True, text=True)
                    prepared[fixture] = r.stderr.strip() if r.returncode != 0 else None
                if prepared[fixture] is not None:
                    print(f"FAIL: {page}:{line}: fixture {fixture}: {prepared[fixture]}")
                    failed += 1
                    continue
                subprocess.run(["cp", "-a", os.path.join(work, "fixtures", fixture), folder],
                               check=True)
            else:
                os.makedirs(folder)
            cmds = []  # (line number, command, expected lines)
            for k, text in enumerate(body):
                if text.startswith("$ "):
                    cmds.append((line + k, text[2:], []))
                elif cmds:
                    cmds[-1][2].append(text)
            for ln, cmd, expected in cmds:
                checked += 1
                r = subprocess.run(["bash", "-c", cmd + " 2>&1"], cwd=folder, env=env, capture_output=True)
                actual = r.stdout.decode("utf-8", "backslashreplace").split("\n")
                if actual and actual[-1] == "":
                    actual.pop()
                if matches(expected, actual):
                    covered.add(page)
                    continue
                failed += 1
                diff = "\n".join(difflib.unified_diff(expected, actual, "documented", "actual", lineterm=""))
                print(f"FAIL: {page}:{ln}: $ {cmd}\n{diff}")
    for c in COMMAND_PAGES:
        if f"{c}.md" in pages and f"{c}.md" not in covered:
            print(f"FAIL: docs/{c}.md has no checked example")
            failed += 1
    print(f"{checked} documented commands run, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
