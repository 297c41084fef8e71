"""What the ui/bench scripts share: running the viewer for its JSON, dropping files from the cache."""
import json
import os
import subprocess
import sys


def viewer_json(viewer, args, timeout, launcher=None):
    """Runs the viewer with args under xvfb-run (1280 × 1024), or under launcher (a command line
    that starts a program with its arguments on a display, e.g. the GPU machine's
    `run-on-gpu.sh env`); its last JSON line, or exits."""
    prefix = launcher.split() if launcher else ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24"]
    cmd = prefix + [viewer] + args
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode != 0 or not lines:
        sys.exit(f"viewer failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(lines[-1])


def drop_cache(path):
    """Drops a file (every file of a folder) from the page cache."""
    files = [path] if not os.path.isdir(path) else [
        os.path.join(d, f) for d, _, names in os.walk(path) for f in names]
    for name in files:
        fd = os.open(name, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
