"""What camclass's Python test drivers share: check() records a failed condition and goes on,
so that one run reports every failure; summary() prints "N failed" and returns the exit status.

    sys.path.insert(0, <the tests/ folder>)
    from checks import check, summary
"""

failures = []


def check(cond, what, verbose=False):
    """FAIL what (and remember it) when cond is false; with verbose, "ok   what" otherwise."""
    if not cond or verbose:
        print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return bool(cond)


def summary():
    """Prints how many checks failed; 1 if any did, else 0."""
    print("%d failed" % len(failures), flush=True)
    return 1 if failures else 0
