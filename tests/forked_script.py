"""The `ldpbook` console script in processes of their own, without the cost of its start.

A start of the command spends most of its time importing numpy and scipy, and the error tables of the tests launch it
about a hundred times. `ForkedScript` runs the console script's own two lines (`sys.argv[0] = ...; sys.exit(main())`)
in a process forked from a server that imported `ldpbook.cli` as the script does, and the modules `main` imports when
it runs, once: a process of its own with its own standard output and error (files), exit code and working folder,
minus the imports. The server fails the test if those imports print anything (a real start would print it too), and
`test_the_forked_script_answers_as_the_script_does` (tests/test_cli.py) holds it to the real script's answers.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

FORK_SERVER = r"""
import contextlib, io, json, os, signal, sys, traceback
printed = io.StringIO()
with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
    from ldpbook.cli import main
    import ldpbook.closeness, ldpbook.estimated, ldpbook.spr
replies = os.fdopen(os.dup(1), "w")
replies.write(json.dumps({"printed": printed.getvalue()}) + "\n")
replies.flush()
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            replies.close()
            os.chdir(job["cwd"])
            for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, job["stdout"], os.O_WRONLY | os.O_CREAT),
                                    (2, job["stderr"], os.O_WRONLY | os.O_CREAT)):
                os.dup2(os.open(path, flags), fd)
            signal.alarm(600)
            sys.argv = [job["script"], *job["args"]]
            sys.argv[0] = sys.argv[0].removesuffix(".exe")
            try:
                sys.exit(main())
            except SystemExit as done:
                code = done.code
            if code is None:
                code = 0
            elif not isinstance(code, int):
                print(code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF)
    replies.write(json.dumps({"status": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}) + "\n")
    replies.flush()
"""


class ForkedScript:
    "`runner(*args, cwd=None)` answers as `subprocess.run([script, *args], capture_output=True, text=True)` would."

    def __init__(self, script):
        self.script = script
        self.server = subprocess.Popen([sys.executable, "-c", FORK_SERVER], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)
        started = json.loads(self.server.stdout.readline())
        assert started["printed"] == "", started

    def __call__(self, *args, cwd=None):
        with tempfile.TemporaryDirectory() as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            job = {"script": str(self.script), "args": [str(a) for a in args], "cwd": str(cwd or os.getcwd()),
                   "stdout": str(out), "stderr": str(err)}
            self.server.stdin.write(json.dumps(job) + "\n")
            self.server.stdin.flush()
            status = json.loads(self.server.stdout.readline())["status"]
            return subprocess.CompletedProcess([str(self.script), *job["args"]], status, out.read_text(),
                                               err.read_text())

    def close(self):
        self.server.stdin.close()
        assert self.server.wait(timeout=60) == 0
