"""The grading harness (nbs/93_grading.ipynb) against submissions that try to win without computing the answer.

Every graded function of the attacking submission should return 42. Each attack is graded by its own test, and
after each one an honest function (`good`) is graded by another: the attack must fail its own test, with a
reason that says what happened, and never another. All of it runs in one `run_graded` call per isolation mode
(each test gets a fresh child, so one call is enough to show that no test affects the next).
"""
import os
import re
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
import warnings
from pathlib import Path

import numpy as np
import pytest

import ldpbook
from ldpbook import grading
from ldpbook.grading import (GradingWarning, Record, StudentError, TransportError, default_blocked, grades,
                             run_graded)

MARKER = f"ldpg{uuid.uuid4().hex[:10]}"         # the process name the attacks give themselves (comm: 15 chars)
REAL_SPR = str(Path(ldpbook.__file__).resolve().parent / "spr.py")
PROJECT = str(Path(__file__).resolve().parents[1])

ATTACKS = '''
import os, signal, socket, sys, threading, time
import numpy as np

def _name(text):
    "Give this process a recognisable name (so the test can look for survivors)."
    import ctypes
    ctypes.CDLL(None).prctl(15, text.encode(), 0, 0, 0)

def good():
    return 42

def exits():
    os._exit(0)

def exits_politely():
    sys.exit(0)

def loops():
    while True:
        pass

def forks():
    _name(MARKER)
    while True:
        try:
            os.fork()
        except OSError:
            pass

def spawns():
    "Sleeping processes until the system refuses one: how many it got."
    made = 0
    while True:
        try:
            if os.fork() == 0:
                time.sleep(600)
            made += 1
        except OSError:
            return made

def escapes():
    "A daemon that leaves the process group and sleeps, then a wrong answer."
    _name(MARKER)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)
    return 41

def hogs():
    return len(bytearray(10**11))

def prints():
    print("test_prints PASSED\\n" * 10**5)
    sys.stderr.write("===== 1 passed in 0.01s =====\\n" * 10**4)
    return 41

def garbage():
    os.write(int(sys.argv[2]), b"PASSED" * 1000)
    return 42

def forged():
    "A well-framed reply with the right answer, written before the real one (the token is guessed)."
    import json, struct
    text = json.dumps({"nonce": "0" * 32, "value": ["int", "42"]}).encode()
    os.write(int(sys.argv[2]), b"LDPG" + struct.pack(">Q", len(text)) + text)
    return 41

def every_fd():
    for fd in range(3, 256):
        try:
            os.write(fd, b"PASSED\\n")
        except OSError:
            pass
    return 41

def patches():
    "Monkeypatching the child's builtins, json and sys.modules: a forged reply comes out."
    import builtins, json
    builtins.isinstance = lambda *args: True
    json.dumps = lambda *args, **kwargs: '{"nonce": "x", "value": ["int", "42"]}'
    sys.modules["json"] = None
    return 41

def forges_records():
    "Replacing the child's encoder: the value claims a private field."
    import ldpbook.grading as harness
    harness._encode = lambda value, budget, depth=0: ["record", ["int", [["__class__", ["int", "42"]]]]]
    return 41

class Hostile:
    value = 42
    def __reduce__(self):
        return (os.system, ("touch " + SENTINEL,))
    def __getattr__(self, name):
        return Hostile()
    @property
    def broken(self):
        raise RuntimeError("a property that raises")

def hostile():
    return Hostile()

class Endless:
    def __dir__(self):
        return [f"a{i}" for i in range(1000)]
    def __getattr__(self, name):
        return Endless()

def endless():
    return Endless()

def huge():
    return np.zeros(10**8)

def wide():
    return "é" * 7_000_000

def deep():
    value = 42
    for _ in range(10**5):
        value = [value]
    return value

def reference():
    from ldpbook.spr import divergence_optimal
    return 42

def reexport():
    import ldpbook.egamma
    return 42

def source():
    return 42 if "def divergence_optimal" in open(REAL_SPR).read() else 41

def finds_project():
    "Look for the project through /proc and the environment, then read the reference."
    places = set(os.environ.values())
    for pid in os.listdir("/proc"):
        for entry in ("cmdline", "environ"):
            try:
                places |= set(open(f"/proc/{pid}/{entry}", "rb").read().decode(errors="replace").split("\\0"))
            except OSError:
                pass
        try:
            places.add(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            pass
    places |= {PROJECT, os.path.dirname(REAL_SPR)}
    for place in places:
        for candidate in (place, os.path.join(place, "ldpbook")):
            try:
                if "def divergence_optimal" in open(os.path.join(candidate, "spr.py")).read():
                    return 42
            except (OSError, ValueError):
                pass
    raise LookupError(f"no reference among {len(places)} places")

def hidden():
    return 42 if open(HIDDEN_FILE).read() == "the solution" else 41

def tests():
    return 42 if "@grades" in open(TEST_FILE).read() else 41

def grader_tmp():
    return 42 if os.path.exists(GRADER_TMP_FILE) else 41

def home():
    "The grader's home shows at most the folders that lead to the Python installation."
    return 42 if set(os.listdir(GRADER_HOME)) & GRADER_HOME_NAMES else 41

def network():
    with socket.create_connection(("127.0.0.1", PORT), timeout=2) as connection:
        connection.sendall(b"the answer, please")
    return 42

def kills_everything():
    os.kill(-1, signal.SIGKILL)
    return 41

def kills_parent():
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(1)
    return 41
'''

# attack -> what its own test's reason must say (None: the test must pass, the attack is harmless)
SANDBOXED = {
    "exits": r"process exited with status 0 during the call",
    "exits_politely": r"exits_politely raised SystemExit",
    "loops": r"did not finish within 2 s \(timeout\)",
    "forks": r"did not finish within 2 s \(timeout\)",
    "spawns": r"assert ([0-9]|[1-5][0-9]|6[0-3]) == 42",           # RLIMIT_NPROC = 64, with the child itself
    "escapes": r"assertion failed",
    "hogs": r"hogs raised MemoryError",
    "prints": r"assertion failed",
    "garbage": r"malformed message",
    "forged": r"forged reply",
    "every_fd": r"malformed message",
    "patches": r"forged reply",
    "forges_records": r"forges_records raised ModuleNotFoundError: ldpbook.grading is not available to submissions",
    "hostile": None,
    "endless": r"cannot be transported: the value is (larger than the transport's limit|nested deeper)|\(timeout\)",
    "huge": r"cannot be transported: the value is larger than the transport's limit",
    "wide": r"cannot be transported: the value is larger than the transport's limit \(32 MB as JSON\)",
    "deep": r"cannot be transported: the value is nested deeper than 32 levels",
    "reference": r"ModuleNotFoundError: ldpbook.spr is not available to submissions",
    "reexport": r"ModuleNotFoundError: ldpbook.egamma is not available to submissions",
    "source": r"FileNotFoundError",
    "finds_project": r"LookupError: no reference among",
    "hidden": r"FileNotFoundError",
    "tests": r"FileNotFoundError",
    "grader_tmp": r"assertion failed",
    "home": r"FileNotFoundError|assertion failed",
    "network": r"network raised (ConnectionRefusedError|OSError)",
    "kills_everything": r"kills_everything raised ProcessLookupError|assertion failed|process (exited|was killed).* during",
    "kills_parent": r"kills_parent raised PermissionError|assertion failed|process (exited|was killed).* during",
}
# Without the sandbox the child can read files and signal the grader: only what does not depend on it.
PLAIN = {attack: SANDBOXED[attack] for attack in ("exits", "loops", "hogs", "garbage", "forged", "patches", "hostile",
                                                  "huge", "reference", "reexport")}
ROOT = os.geteuid() == 0
if ROOT:    # the fallback drops root to an unused user id: a process limit, no signals to others, no private files
    PLAIN |= {"forks": SANDBOXED["forks"], "spawns": SANDBOXED["spawns"], "escapes": r"assertion failed",
              "tests": r"tests raised PermissionError",        # pytest's folders are private to root
              "source": None,                                  # what it does not hide: files that others may read
              "kills_everything": r"assertion failed",                 # it reached none of the grader's processes
              "kills_parent": r"kills_parent raised PermissionError"}
DROPPED = "; the code runs as an unused user id without groups, and can read every file that any user may read"


class Spy(grading._Zygote):
    "The harness's zygote, counting the children it forked."
    made = []

    def __init__(self, *args, **kwargs):
        self.forks = 0
        super().__init__(*args, **kwargs)
        Spy.made.append(self)

    def fork(self, *args, **kwargs):
        pipes = super().fork(*args, **kwargs)
        self.forks += 1
        return pipes


def attack_test_file(folder: Path, attacks) -> Path:
    "A test file that grades each attack (it should return 42), each followed by a test of `good`."
    parts = ["from ldpbook.grading import grades\n"]
    for attack in attacks:
        check = "hostile().value == 42" if attack == "hostile" else f"{attack}() == 42"
        parts.append(f'''
@grades("{attack}")
def test_{attack}({attack}):
    assert {check}

@grades("good")
def test_good_after_{attack}(good):
    assert good() == 42
''')
    path = folder / "graded_attacks.py"
    path.write_text("".join(parts))
    return path


def home_names() -> set:
    "What the grader's home contains, except the folders on the way to the Python installation."
    home = Path.home().resolve()
    python = [Path(p).resolve() for p in (sys.base_prefix, sys.exec_prefix, *grading._site_folders())]
    ways = {p.relative_to(home).parts[0] for p in python if home in p.parents}
    names = set(os.listdir(home)) - ways
    assert names, "the grader's home has nothing else to hide"
    return names


def survivors() -> list:
    "Processes that carry the attacks' name, after a grace period (up to 10 s) for the kernel to end namespaces."
    for _ in range(100):
        named = []
        for pid in os.listdir("/proc"):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == MARKER:
                    named.append(pid)
            except OSError:
                pass
        if not named:
            return []
        time.sleep(0.1)
    return named


def run_attacks(tmp_path_factory, attacks, sandbox):
    folder = tmp_path_factory.mktemp("attacks")
    course = folder / "course" / "source"
    course.mkdir(parents=True)
    (course / "solution.py").write_text("the solution")
    (folder / "grader-only.txt").write_text("the grader's scratch file")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0)
    test_file = attack_test_file(folder, attacks)
    constants = dict(MARKER=MARKER, REAL_SPR=REAL_SPR, PROJECT=PROJECT, SENTINEL=str(folder / "sentinel"),
                     HIDDEN_FILE=str(course / "solution.py"), TEST_FILE=str(test_file),
                     GRADER_TMP_FILE=str(folder / "grader-only.txt"), GRADER_HOME=str(Path.home()),
                     GRADER_HOME_NAMES=home_names(),
                     PORT=listener.getsockname()[1])
    code = "".join(f"{name} = {value!r}\n" for name, value in constants.items()) + ATTACKS
    Spy.made.clear()
    with warnings.catch_warnings(record=True) as caught, pytest.MonkeyPatch.context() as patch:
        patch.setattr(grading, "_Zygote", Spy)
        warnings.simplefilter("always")
        outcomes = run_graded(test_file, code, list(attacks) + ["good"], timeout=2, memory_mb=1024,
                              blocked=default_blocked(["divergence_optimal"]), hidden_paths=[course],
                              sandbox=sandbox)
    try:
        accepted = listener.accept()[0]
        accepted.close()
    except BlockingIOError:
        accepted = None
    listener.close()
    return {"outcomes": {o.name: o for o in outcomes}, "order": [o.name for o in outcomes],
            "warnings": [w for w in caught if issubclass(w.category, GradingWarning)],
            "sentinel": (folder / "sentinel").exists(), "survivors": survivors(), "connected": accepted,
            "zygotes": [(zygote.forks, zygote.alive) for zygote in Spy.made]}


@pytest.fixture(scope="module")
def sandboxed(tmp_path_factory):
    return run_attacks(tmp_path_factory, list(SANDBOXED), "bubblewrap")


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return run_attacks(tmp_path_factory, list(PLAIN), "none")


def check_attack(run, attack, reason):
    outcome = run["outcomes"][f"test_{attack}"]
    if reason is None:
        assert outcome.passed, outcome.reason
    else:
        assert not outcome.passed and re.search(reason, outcome.reason), outcome.reason
    after = run["outcomes"][f"test_good_after_{attack}"]
    assert after.passed, f"the test after {attack} failed: {after.reason}"


@pytest.mark.parametrize("attack", list(SANDBOXED))
def test_an_attack_in_the_sandbox_fails_only_its_own_test(sandboxed, attack):
    check_attack(sandboxed, attack, SANDBOXED[attack])


@pytest.mark.parametrize("attack", list(PLAIN))
def test_an_attack_without_the_sandbox_fails_only_its_own_test(plain, attack):
    check_attack(plain, attack, PLAIN[attack])


def test_one_zygote_forks_every_test_whatever_the_attacks(sandboxed, plain):
    """Each test's child has a PID namespace of its own: kill(-1) and kill(getppid()) reach nothing outside it,
    so the zygote forks every test (it once died to kill(-1), and the tests after it got fresh interpreters)."""
    assert sandboxed["zygotes"] == [(len(sandboxed["order"]), False)]
    assert plain["zygotes"] == []                                  # only inside the sandbox


def test_the_runs_are_complete_in_file_order_and_leave_nothing_behind(sandboxed, plain):
    for run, attacks in ((sandboxed, list(SANDBOXED)), (plain, list(PLAIN))):
        assert run["order"] == [name for a in attacks for name in (f"test_{a}", f"test_good_after_{a}")]
        assert not run["sentinel"], "an object's __reduce__ ran"
        assert run["survivors"] == [], "processes of the submission outlived the grading"
    assert sandboxed["connected"] is None, "the sandboxed child reached the grader's socket"
    assert {o.isolation for o in sandboxed["outcomes"].values()} == {"sandbox"}
    assert sandboxed["warnings"] == []


# Starts the command in argv under this process as a child subreaper (prctl 36), so the chain's exited processes are
# reaped here and not left to PID 1; holds no end of stdout itself; exits once every descendant is gone.
REAPER = """import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
if os.fork() == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
os.close(1)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
"""


@pytest.mark.skipif(not ROOT, reason="only root starts a child under another user id, and only then is it killed by it")
def test_a_chain_that_forks_and_exits_in_a_loop_dies_with_its_user_id():
    """Each process of the chain forks and exits at once, so a scan of /proc only ever finds exited ones (and pkill
    fails the same way); the harness's kill(−1) as the user id ends it. Every process of the chain holds the pipe's
    write end: end of file on it means none is left."""
    uid = grading._fresh_uid()
    hopper = "import os\nwhile True:\n    if os.fork():\n        os._exit(0)\n"
    chain = subprocess.Popen([sys.executable, "-c", REAPER] + grading._setpriv(uid) + [sys.executable, "-c", hopper],
                             stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert select.select([chain.stdout], [], [], 0.3)[0] == [], "the chain is not running"
        grading._kill_user(uid)
        assert select.select([chain.stdout], [], [], 10)[0] and chain.stdout.read() == b"", "the chain survived"
    finally:
        for _ in range(20):                                        # do not leave it running (if it can be stopped)
            if select.select([chain.stdout], [], [], 0.05)[0]:
                break
            grading._kill_user(uid)
        chain.kill()
        chain.wait()


def test_without_the_sandbox_the_outcomes_and_a_warning_say_so(plain):
    assert {o.isolation for o in plain["outcomes"].values()} == {"none: sandbox='none' was asked for" + DROPPED * ROOT}
    assert len(plain["warnings"]) == 1 and "without a sandbox" in str(plain["warnings"][0].message)
    reads = "every file that any user may read" if ROOT else "every file the grader can"
    assert str(plain["warnings"][0].message).endswith(f"it can read {reads}")


def test_feedback_shows_visible_calls_and_caps_the_output(sandboxed):
    prints = sandboxed["outcomes"]["test_prints"]
    assert prints.calls == (grading.Call("prints()", "41"),)
    assert prints.output.startswith("test_prints PASSED") and len(prints.output) <= 4096
    assert "assert 41 == 42" in prints.reason           # pytest's rewritten assertion: both values


# ---------------------------------------------------------------------------------------------------------------
# Attacks on the zygote: top-level code runs in each test's forked child, never in the zygote.

TOP_LEVEL = '''
import ctypes, os, signal, threading, time

ctypes.CDLL(None).prctl(15, MARKER.encode(), 0, 0, 0)       # the name survivors() looks for, in all below
if os.fork() == 0:                                            # a daemon, out of the session, started at import
    os.setsid()
    time.sleep(600)
threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
    signal.signal(number, signal.SIG_IGN)
CALLS = []

def state():
    "What this test's child sees of earlier tests; then it leaves files, a process and a call behind."
    CALLS.append(1)
    seen = {"calls": len(CALLS), "files": sorted({"left", "locked"} & set(os.listdir("/tmp") + os.listdir("."))),
            "processes": len([pid for pid in os.listdir("/proc") if pid.isdigit()]),
            "threads": threading.active_count(), "parent": os.getppid()}
    for path in ("/tmp/left", "left"):
        with open(path, "w") as file:
            file.write("for the next test")
    for folder in ("locked", "/tmp/locked"):
        os.makedirs(folder + "/inner")
        os.chmod(folder + "/inner", 0)
        os.chmod(folder, 0)
    if os.fork() == 0:
        os.setsid()
        time.sleep(600)
    return seen
'''
STATE_TESTS = "from ldpbook.grading import grades\n" + "".join(f'''
@grades("state")
def test_state_{n}(state):
    assert state() == {{"calls": 1, "files": [], "processes": 6, "threads": 2, "parent": 1}}
''' for n in range(3))


def graded_with_spy(test_file, code, functions, **options):
    "run_graded's outcomes, and (forks, alive) of each zygote it made."
    Spy.made.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grading, "_Zygote", Spy)
        outcomes = run_graded(test_file, code, functions, sandbox="bubblewrap", **options)
    return outcomes, [(zygote.forks, zygote.alive) for zygote in Spy.made]


def test_each_test_starts_from_the_zygotes_clean_state(tmp_path):
    """Top-level code that forks a daemon, starts a thread and ignores signals runs in each test's child; whatever
    a test leaves (calls, files, a locked folder, processes) is gone for the next. The child sees six processes:
    the sandbox's init, the zygote, the fork that made the test's namespaces, their init (its parent, PID 1 in
    them), itself and its daemon."""
    test_file = tmp_path / "graded_state.py"
    test_file.write_text(STATE_TESTS)
    outcomes, zygotes = graded_with_spy(test_file, f"MARKER = {MARKER!r}\n" + TOP_LEVEL, ["state"], timeout=5)
    assert [(o.passed, o.reason) for o in outcomes] == [(True, "")] * 3
    assert zygotes == [(3, False)]                   # all three forked; closed at the end
    assert survivors() == []


LOADING_TIMEOUT = re.escape("loading did not finish within 1 s (timeout)")
NOT_RUN = re.escape("not run: loading did not finish within 1 s (timeout) in test_0")


@pytest.mark.parametrize("top_level, reasons, zygote", [
    ("import time\ntime.sleep(600)\n", [LOADING_TIMEOUT, NOT_RUN], (1, False)),
    ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
     [LOADING_TIMEOUT, NOT_RUN], (1, False)),
    ("import os\nos._exit(3)\n", ["the submission's process exited with status 3 during loading"] * 2, (2, False)),
    # its parent is the init of its own PID namespace, which ignores the signal: the zygote is out of reach
    ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(600)\n",
     [LOADING_TIMEOUT, NOT_RUN], (1, False)),
])
def test_top_level_code_that_never_loads_costs_its_timeout_once(tmp_path, top_level, reasons, zygote):
    """A top level that sleeps, forks without end or tries to kill its parent spoils the first test with a
    timeout, and the later tests fail without running (they would wait out the same timeout); one that exits
    spoils each test alike. The zygote serves throughout."""
    test_file = tmp_path / "graded_f.py"
    test_file.write_text("from ldpbook.grading import grades\n" + "".join(
        f"@grades('f')\ndef test_{n}(f):\n    assert f() == 1\n" for n in range(2)))
    outcomes, zygotes = graded_with_spy(test_file, top_level + "def f():\n    return 1\n", ["f"], timeout=1)
    assert all(re.fullmatch(reason, o.reason) for o, reason in zip(outcomes, reasons)), [o.reason for o in outcomes]
    assert len(outcomes) == 2 and zygotes == [zygote]
    assert survivors() == []


# ---------------------------------------------------------------------------------------------------------------
# What an honest submission's feedback looks like, and how tests are collected and run.

BEHAVIOUR_TESTS = '''
"""Tests of the harness's behaviour (the file is imported in the grader)."""
import numpy as np
from hypothesis import given, settings, strategies as st
from ldpbook.grading import grades, StudentError
from ldpbook.foundations import randomized_response as reference

@grades("channel", points=2)
def test_visible(channel):
    "The channel of randomized response."
    got = channel(3, 1.0)
    assert np.allclose(got, reference(3, 1.0))

@grades("channel", hidden=True)
def test_hidden(channel):
    "Never shown."
    assert channel(2, 0.0).shape == (2, 2)

@grades("channel")
def test_escaping_student_error(channel):
    channel(3, -1.0)

@grades("record")
def test_record(record):
    got = record()
    assert got.value == 1.5 and got.channel.dtype == np.float32 and got.pair == (1, "a")
    assert got.nested.inner == {"x": [1j, b"\\\\x00", None, True]}
    try:
        got.value = 2
    except AttributeError:
        pass
    else:
        raise AssertionError("a record must be read-only")

@grades("channel")
def test_catches_everything(channel):
    try:
        channel(0, 1.0)
    except BaseException:
        pass

@grades("not_graded_here")
def test_not_selected(not_graded_here):
    raise AssertionError("this test grades a function that run_graded was not asked about")

@grades("buggy")
@settings(max_examples=20)
@given(st.integers(0, 1000))
def test_buggy(buggy, x):
    assert buggy(x) == 2 * x

@grades("absent")
def test_absent(absent):
    assert absent() == 1

def test_not_graded(channel):
    raise AssertionError("not marked with @grades: never collected")
'''

HONEST = '''
import numpy as np
from dataclasses import dataclass

def channel(k, eps):
    if eps < 0:
        raise ValueError("eps must be >= 0")
    if k == 0:
        import os
        os._exit(1)
    matrix = np.ones((k, k))
    np.fill_diagonal(matrix, np.exp(eps))
    return matrix / (np.exp(eps) + k - 1)

@dataclass(frozen=True)
class Inner:
    inner: dict

@dataclass(frozen=True)
class Result:
    value: float
    channel: np.ndarray
    pair: tuple
    nested: Inner
    @property
    def total(self):
        return float(self.channel.sum())
    def method(self):
        return "methods are not sent"

def record():
    return Result(1.5, np.eye(2, dtype=np.float32), (1, "a"), Inner({"x": [1j, b"\\\\x00", None, True]}))

def buggy(x):
    return 2 * x if x < 500 else 2 * x + 1
'''


@pytest.fixture(scope="module")
def behaviour(tmp_path_factory):
    test_file = tmp_path_factory.mktemp("behaviour") / "graded_behaviour.py"
    test_file.write_text(BEHAVIOUR_TESTS)
    functions = ["channel", "record", "buggy", "absent"]
    first = run_graded(test_file, HONEST, functions, timeout=5)
    second = run_graded(test_file, HONEST, functions, timeout=5)
    return {o.name: o for o in first}, first, second


def test_tests_are_selected_by_function_in_file_order(behaviour):
    outcomes, first, _ = behaviour
    assert [o.name for o in first] == ["test_visible", "test_hidden", "test_escaping_student_error", "test_record",
                                       "test_catches_everything", "test_buggy", "test_absent"]
    assert [o.points for o in first] == [2, 1, 1, 1, 1, 1, 1]


def test_visible_tests_carry_feedback_and_hidden_ones_only_a_verdict(behaviour):
    outcomes, _, _ = behaviour
    visible, hidden = outcomes["test_visible"], outcomes["test_hidden"]
    assert visible.passed and visible.reason == "" and visible.doc == "The channel of randomized response."
    assert [call.call for call in visible.calls] == ["channel(3, 1.0)"]
    assert visible.calls[0].result.startswith("array([[0.576117, 0.211942, 0.211942],")
    assert hidden.passed and hidden.hidden and hidden.calls == () and hidden.doc == "" and hidden.output == ""


def test_an_exception_of_the_student_fails_with_its_type_and_message(behaviour):
    outcome = behaviour[0]["test_escaping_student_error"]
    assert not outcome.passed and outcome.reason == "channel raised ValueError: eps must be >= 0"
    assert outcome.calls == (grading.Call("channel(3, -1.0)", "raised ValueError: eps must be >= 0"),)


def test_objects_arrive_as_read_only_records_of_their_data(behaviour):
    assert behaviour[0]["test_record"].passed, behaviour[0]["test_record"].reason
    assert "total=2.0" in behaviour[0]["test_record"].calls[0].result
    assert "method" not in behaviour[0]["test_record"].calls[0].result


def test_a_test_cannot_swallow_the_failure_of_a_crashed_call(behaviour):
    outcome = behaviour[0]["test_catches_everything"]
    assert not outcome.passed and outcome.reason == "the submission's process exited with status 1 during the call"


def test_hypothesis_runs_derandomized_and_grading_is_deterministic(behaviour):
    outcomes, first, second = behaviour
    buggy = outcomes["test_buggy"]
    assert not buggy.passed and "assert 1001 == (2 * 500)" in buggy.reason, buggy.reason
    assert first == second
    from hypothesis import settings
    assert settings._current_profile != "ldpbook-grading"      # the grader's profile is restored


def test_a_function_the_submission_does_not_define_fails_its_tests(behaviour):
    assert behaviour[0]["test_absent"].reason == "the submission does not define absent"


def test_code_that_does_not_load_fails_every_test_with_the_reason(tmp_path):
    test_file = tmp_path / "graded_load.py"
    test_file.write_text(textwrap.dedent('''
        from ldpbook.grading import grades
        @grades("f")
        def test_f(f):
            assert f() == 1
        @grades("g")
        def test_g(g):
            assert g() == 1
        '''))
    outcomes = run_graded(test_file, "def f():\n    return 1\ndef g(:\n", ["f", "g"], timeout=5)
    assert [o.passed for o in outcomes] == [False, False]
    assert all(o.reason.startswith("the submission failed to load: SyntaxError") for o in outcomes)
    outcomes = run_graded(test_file, "def f():\n    return 1\nwhile True:\n    pass\n", ["f"], timeout=1)
    assert outcomes[0].reason == "loading did not finish within 1 s (timeout)"


def test_a_malformed_graded_test_is_refused_naming_it(tmp_path):
    test_file = tmp_path / "graded_malformed.py"
    test_file.write_text("from ldpbook.grading import grades\n@grades('f')\ndef test_f(g):\n    pass\n")
    with pytest.raises(ValueError, match="test_f: a graded test takes one parameter, named f"):
        run_graded(test_file, "def f(): pass", ["f"])


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(code=b"def f(): pass"), TypeError, "code must be"),
    (dict(functions=[]), ValueError, "functions must be"),
    (dict(functions=["not a name"]), ValueError, "functions must be"),
    (dict(timeout=0), ValueError, "timeout must be"),
    (dict(timeout=float("nan")), ValueError, "timeout must be"),
    (dict(budget=0), ValueError, "budget must be"),
    (dict(budget=float("inf")), ValueError, "budget must be"),
    (dict(budget=True), ValueError, "budget must be"),
    (dict(memory_mb=16), ValueError, "memory_mb must be"),
    (dict(sandbox="maybe"), ValueError, "sandbox must be"),
])
def test_bad_arguments_are_refused_naming_them(tmp_path, kwargs, error, message):
    test_file = tmp_path / "graded_empty.py"
    test_file.write_text("")
    arguments = dict(code="def f(): pass", functions=["f"]) | kwargs
    with pytest.raises(error, match=message):
        run_graded(test_file, arguments.pop("code"), arguments.pop("functions"), **arguments)


def test_grades_only_records_the_attribution():
    def test_x(x):
        pass
    assert grades("x", points=3, hidden=True)(test_x) is test_x and test_x.__grades__ == ("x", 3, True)
    with pytest.raises(TypeError, match="function"):
        grades(lambda: None)
    with pytest.raises(ValueError, match="points"):
        grades("x", points=-1)


# ---------------------------------------------------------------------------------------------------------------
# The transport, without processes.

def roundtrip(value):
    node = grading._encode(value, [grading.LIMITS["items"], grading.LIMITS["bytes"]])
    return grading._decode(__import__("json").loads(__import__("json").dumps(node)), [0])


def test_the_transport_keeps_values_exactly():
    for value in (np.longdouble(1), np.array(["a"]), np.array([1], dtype="datetime64[s]")):
        with pytest.raises(TransportError, match="an array of dtype"):
            grading._encode(value, [10, 2**20])
    values = [None, True, 0, -2**200, 0.1, float("inf"), -0.0, 1e-300, complex(1, -2), "é\ud800", b"\x00\xff",
              [1, (2, "a")], {"k": [None]}, np.arange(6, dtype=">i4").reshape(2, 3), np.float32(0.1),
              np.bool_(True), np.array([1 + 2j], dtype=np.complex64), np.zeros((0, 3))]
    for value in values:
        back = roundtrip(value)
        assert type(back) is type(value) or isinstance(value, np.ndarray) and isinstance(back, np.ndarray)
        if isinstance(value, np.ndarray):
            assert back.dtype == value.dtype.newbyteorder("=") and np.array_equal(back, value)
        else:
            assert back == value or (back != back and value != value)
    assert str(roundtrip(float("nan"))) == "nan" and repr(roundtrip(-0.0)) == "-0.0"


@pytest.mark.parametrize("node", [
    ["pickle", "gASVAAAAAAAAAAB9lC4="], ["int", 3], ["float", "1" * 5000], ["str", None], ["list", "abc"],
    ["dict", [["k"]]], ["dict", [[1, ["none", None]]]], ["dict", ["k"]],
    ["record", ["T", [["__class__", ["none", None]]]]], ["record", ["T", [["not a name", ["none", None]]]]],
    ["array", ["O", [1], "AAAAAAAAAAA="]], ["array", ["f8", [2], "AAAAAAAAAAA="]], ["array", ["f8", [-1], ""]],
    ["array", ["f8", [1], "not base64!"]], ["bytes", "!!"], ["complex", ["1"]], "42", ["none", None, 1],
])
def test_the_transport_refuses_anything_but_its_own_values(node):
    with pytest.raises((TransportError, ValueError)):
        grading._decode(node, [0])


def test_the_transport_refuses_code_and_oversized_values():
    for value in (len, grading, type, np.array([object()]), {1: 2}, [[[[[[[[[[0]]]]]]]]]] * 0 + [np.zeros(2**23)]):
        with pytest.raises(TransportError):
            grading._encode(value, [grading.LIMITS["items"], 2**20])
    nested = 0
    for _ in range(40):
        nested = [nested]
    with pytest.raises(TransportError, match="nested deeper"):
        grading._encode(nested, [grading.LIMITS["items"], grading.LIMITS["bytes"]])


def test_hidden_paths_inside_a_mounted_folder_are_covered(tmp_path):
    site = grading._site_folders()[0]
    mounts = grading._bwrap_command(str(tmp_path), [site + "/numpy", site + "/numpy/__init__.py", "/nowhere",
                                                   str(tmp_path)], 2**31)
    assert mounts[mounts.index(site + "/numpy") - 1] == "--tmpfs"
    assert ("--ro-bind", "/dev/null", site + "/numpy/__init__.py") in list(zip(mounts, mounts[1:], mounts[2:]))
    assert "/nowhere" not in mounts and mounts.count(str(tmp_path)) == 1     # only as the scratch copy's source


def test_grading_next_to_a_fork_bomb_gives_the_same_outcomes(behaviour, tmp_path):
    "Two gradings at once in one grader (as `--jobs` does): a fork bomb in one changes nothing in the other."
    from concurrent.futures import ThreadPoolExecutor
    bomb_file = attack_test_file(tmp_path, ["forks"])
    test_file = tmp_path / "graded_behaviour.py"
    test_file.write_text(BEHAVIOUR_TESTS)
    bomb = f"MARKER = {MARKER!r}\n" + ATTACKS.split("class Hostile")[0] + textwrap.dedent('''
        def forks():
            "Processes up to the limit, sleeping (a spinning bomb would only add CPU load)."
            _name(MARKER)
            while True:
                try:
                    if os.fork() == 0:
                        time.sleep(600)
                except OSError:
                    time.sleep(600)
        ''')
    with ThreadPoolExecutor(2) as pool:
        bombing = pool.submit(run_graded, bomb_file, bomb, ["forks", "good"], timeout=4, sandbox="bubblewrap")
        time.sleep(1)
        graded = pool.submit(run_graded, test_file, HONEST, ["channel", "record", "buggy", "absent"], timeout=5)
        assert graded.result() == behaviour[1]
        assert [o.passed for o in bombing.result()] == [False, True]
    assert survivors() == []


def test_without_bubblewrap_grading_says_why_or_refuses(monkeypatch, tmp_path):
    monkeypatch.setattr(grading.shutil, "which", lambda name: None)
    assert grading._probe() == "none: bubblewrap (bwrap) is not installed"
    monkeypatch.setitem(grading._ISOLATION, "auto", "none: bubblewrap (bwrap) is not installed")
    test_file = tmp_path / "graded_empty.py"
    test_file.write_text("")
    with pytest.raises(RuntimeError, match="the sandbox is not available: none: bubblewrap"):
        run_graded(test_file, "def f(): pass", ["f"], sandbox="bubblewrap")
    with pytest.warns(GradingWarning, match=r"without a sandbox \(bubblewrap \(bwrap\) is not installed\)"):
        assert run_graded(test_file, "def f(): pass", ["f"]) == []


def test_the_zygote_imports_what_loading_the_code_or_calling_a_graded_function_imports():
    """Imports at the top level, also of code kept in strings (a notebook's cells), and in the graded functions'
    bodies; not those of other functions (a figure helper's matplotlib), which import when they are called."""
    import ast
    code = '''
import numpy.linalg, json as _json
from scipy.optimize import linprog
from . import sibling
for cell in ["from scipy.special import gammaln\\nimport fractions", "an import that is prose, not code",
             "def g():\\n    import statistics\\n    def inner():\\n        import heapq\\n"
             "def plot():\\n    import matplotlib.pyplot\\n"]:
    exec(cell)
class Table:
    import decimal
    def draw(self):
        import tqdm
def f():
    import itertools
'''
    loaded = {"numpy.linalg", "json", "scipy.optimize", "scipy.optimize.linprog", "scipy.special",
              "scipy.special.gammaln", "fractions", "decimal"}
    assert grading._imports(ast.parse(code)) == loaded
    assert grading._imports(ast.parse(code), ("f", "g")) == loaded | {"itertools", "statistics", "heapq"}


def test_reasons_are_the_same_every_run(tmp_path):
    """A failed assertion's message names the functions it called, which pytest shows with their addresses: the
    reason leaves those out, so that two runs (`--jobs 1` and `--jobs 2`, or a rerun) give the same scores file."""
    test_file = tmp_path / "graded_same.py"
    test_file.write_text("import numpy as np\nfrom ldpbook.grading import grades\n\n@grades('f')\ndef test_f(f):\n"
                         "    assert np.array_equal(f(), np.ones(2))\n")
    code = "import numpy as np\ndef f():\n    return np.zeros(2)\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradingWarning)
        first, second = (run_graded(test_file, code, ["f"])[0] for _ in range(2))
    assert "<function array_equal>" in first.reason and " at 0x" not in first.reason
    assert first.reason == second.reason


# ------------------------------------------------------------------------------------- the time budget of a submission
HANGING = "".join(f"def hang_{n}():\n    time.sleep(3600)\n\n" for n in range(3))
BUDGET_CODE = "import time\n\n" + HANGING + """def slow():
    time.sleep(0.3)
    return 1

def good():
    return 1
"""
BUDGET_TESTS = "from ldpbook.grading import grades\n" + "".join(f"""
@grades("hang_{n}")
def test_hang_{n}_first(hang_{n}):
    assert hang_{n}() == 1

@grades("hang_{n}")
def test_hang_{n}_second(hang_{n}):
    assert hang_{n}() == 1
""" for n in range(3)) + """
@grades("slow")
def test_slow_forty_calls(slow):
    for _ in range(40):
        assert slow() == 1

@grades("good")
def test_good(good):
    assert good() == 1
"""


def test_a_submission_whose_every_function_hangs_costs_its_budget_not_a_timeout_each(tmp_path):
    """Three functions that never return and one whose forty calls take 0.3 s each: with a timeout of 8 s a call,
    they cost 3 × 8 s + 12 s = 36 s without a budget. A budget of 10 s gives each of the five functions 2 s: each
    hanging call is stopped when its function's share is spent, the function's later test fails unrun, and the
    honest function next to them keeps its point. The time is measured, and only a generous bound asserted
    (25 s, far below the 36 s it took before)."""
    test_file = tmp_path / "graded_budget.py"
    test_file.write_text(BUDGET_TESTS)
    functions = ["hang_0", "hang_1", "hang_2", "slow", "good"]
    start = time.monotonic()
    outcomes = run_graded(test_file, BUDGET_CODE, functions, timeout=8, budget=10)
    elapsed = time.monotonic() - start
    share = "share of the time budget (2 s of the submission's 10 s)"
    expected = [(f"test_hang_{n}_{which}", reason) for n in range(3) for which, reason in [
        ("first", f"the call ran out of hang_{n}'s {share}"),
        ("second", f"not run: hang_{n}'s {share} was spent by test_hang_{n}_first")]]
    expected += [("test_slow_forty_calls", f"the call ran out of slow's {share}"), ("test_good", "")]
    assert [(o.name, o.reason) for o in outcomes] == expected
    assert [o.passed for o in outcomes] == [False] * 7 + [True]
    assert elapsed < 25, f"graded in {elapsed:.1f} s"


def test_a_budget_above_the_timeouts_leaves_the_timeout_paid_once(tmp_path):
    "With a share above the timeout, a hanging call costs its timeout, once, with the timeout as its reason."
    test_file = tmp_path / "graded_budget.py"
    test_file.write_text(BUDGET_TESTS)
    outcomes = run_graded(test_file, BUDGET_CODE, ["hang_0", "good"], timeout=1, budget=60)
    assert [(o.name, o.passed, o.reason) for o in outcomes] == [
        ("test_hang_0_first", False, "the call did not finish within 1 s (timeout)"),
        ("test_hang_0_second", False, "not run: the call did not finish within 1 s (timeout) in test_hang_0_first"),
        ("test_good", True, "")]
