"""No channel out of a call (nbs/93_grading.ipynb): what one test's child leaves behind must not reach a later
test, of the same submission or of the next one.

A hidden test hands the submission's `record` a secret; `record` leaves it in every place a process can write
and another process of the same sandbox could read: a SysV shared-memory segment, a SysV message queue, a POSIX
shared-memory object, a POSIX message queue, a file in /tmp and in $HOME, the environment, a daemon that keeps
it in an inherited descriptor (a pipe) and listens on an abstract Unix socket. A later, visible test calls
`recall`, which looks in all those places and returns what it found: feedback shows that test's calls and
output, so whatever `recall` finds is what a student could learn of a hidden test's inputs. Each place is first
checked to work within one test (`test_the_channels_work_within_one_call`), so that finding nothing later means
the place was fresh, not that the attack was broken.
"""
import textwrap
import warnings
from pathlib import Path

import pytest

from ldpbook import grading
from ldpbook.grading import run_graded

SECRET = "k=7 eps=1.25 hidden-input"
CHANNELS = ("sysv_shm", "sysv_msg", "posix_shm", "posix_mq", "tmp_file", "home_file", "environment", "descriptor")

SUBMISSION = '''
import ctypes, os, socket, struct, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
KEY, SIZE, SOCKET = 0x1d9b, 4096, b"\\0ldpbook-channel"

def _segment(create):
    shmid = libc.shmget(KEY, SIZE, (0o1000 if create else 0) | 0o666)
    if shmid < 0:
        return None
    address = libc.shmat(shmid, None, 0)
    return None if address in (None, ctypes.c_void_p(-1).value) else address

def record(text):
    data = text.encode()
    found = {}
    try:
        address = _segment(True)
        ctypes.memmove(address, data + b"\\0", len(data) + 1)
        found["sysv_shm"] = True
    except Exception:
        pass
    try:
        queue = libc.msgget(KEY, 0o1000 | 0o666)
        message = struct.pack("l", 1) + data
        found["sysv_msg"] = queue >= 0 and libc.msgsnd(queue, message, len(data), 0) == 0
    except Exception:
        pass
    try:
        from multiprocessing import shared_memory, resource_tracker
        block = shared_memory.SharedMemory(name="ldpbook-channel", create=True, size=SIZE)
        resource_tracker.unregister(block._name, "shared_memory")
        block.buf[:len(data)] = data
        found["posix_shm"] = True
    except Exception:
        pass
    try:
        queue = libc.mq_open(b"/ldpbook-channel", os.O_CREAT | os.O_WRONLY, 0o666, None)
        found["posix_mq"] = queue >= 0 and libc.mq_send(queue, data, len(data), 0) == 0
    except Exception:
        pass
    for key, folder in (("tmp_file", "/tmp"), ("home_file", os.environ.get("HOME", "/tmp"))):
        try:
            with open(os.path.join(folder, f"ldpbook-channel-{key}"), "w") as handle:
                handle.write(text)
            found[key] = True
        except OSError:
            pass
    os.environ["LDPBOOK_CHANNEL"] = text
    os.putenv("LDPBOOK_CHANNEL", text)
    found["environment"] = True
    read, write = os.pipe()
    os.write(write, data)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(SOCKET)
    listener.listen()
    if os.fork() == 0:                     # a daemon that keeps the secret and hands it to whoever asks
        os.setsid()
        if os.fork() == 0:
            while True:
                connection = listener.accept()[0]
                connection.sendall(os.read(read, 4096))
                os._exit(0)
        os._exit(0)
    found["descriptor"] = True
    time.sleep(0.2)
    return found

def recall():
    found = {}
    address = _segment(False)
    if address is not None:
        found["sysv_shm"] = ctypes.string_at(address).decode(errors="replace")
    queue = libc.msgget(KEY, 0o666)
    if queue >= 0:
        buffer = ctypes.create_string_buffer(SIZE)
        size = libc.msgrcv(queue, buffer, SIZE - 8, 0, 0o4000)       # IPC_NOWAIT
        if size > 0:
            found["sysv_msg"] = buffer.raw[8:8 + size].decode(errors="replace")
    try:
        from multiprocessing import shared_memory, resource_tracker
        block = shared_memory.SharedMemory(name="ldpbook-channel")
        resource_tracker.unregister(block._name, "shared_memory")
        found["posix_shm"] = bytes(block.buf).rstrip(b"\\0").decode(errors="replace")
    except Exception:
        pass
    queue = libc.mq_open(b"/ldpbook-channel", os.O_RDONLY | os.O_NONBLOCK, 0, None)
    if queue >= 0:
        buffer = ctypes.create_string_buffer(16384)
        size = libc.mq_receive(queue, buffer, 16384, None)
        if size > 0:
            found["posix_mq"] = buffer.raw[:size].decode(errors="replace")
    for key, folder in (("tmp_file", "/tmp"), ("home_file", os.environ.get("HOME", "/tmp"))):
        try:
            found[key] = open(os.path.join(folder, f"ldpbook-channel-{key}")).read()
        except OSError:
            pass
    if "LDPBOOK_CHANNEL" in os.environ:
        found["environment"] = os.environ["LDPBOOK_CHANNEL"]
    try:
        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(1)
            connection.connect(SOCKET)
            found["descriptor"] = connection.recv(4096).decode(errors="replace")
    except OSError:
        pass
    print(found)
    return found

def both(text):
    "Record, then recall in the same process: the channels that carried the text within one call."
    record(text)
    return sorted(key for key, value in recall().items() if value == text)
'''

TESTS = f'''
from ldpbook.grading import grades

@grades("both")
def test_both(both):
    "Within one call every channel carries the secret."
    assert both({SECRET!r}) == {{}}

@grades("record", hidden=True)
def test_record(record):
    "A hidden test: the secret is its input."
    assert record({SECRET!r})

@grades("recall")
def test_recall(recall):
    "A later visible test: what it finds, feedback would show."
    assert recall() == {{}}
'''

pytestmark = pytest.mark.skipif(grading.sandbox_status() != "sandbox", reason="needs the bubblewrap sandbox")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    "Two submissions graded one after the other: the second only recalls."
    folder = tmp_path_factory.mktemp("channels")
    test_file = folder / "graded_channels.py"
    test_file.write_text(TESTS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = run_graded(test_file, SUBMISSION, ["both", "record", "recall"], blocked=(), timeout=10)
        second = run_graded(test_file, SUBMISSION, ["recall"], blocked=(), timeout=10)
    return {o.name: o for o in first}, {o.name: o for o in second}


def test_the_channels_work_within_one_call(outcomes):
    first, _ = outcomes
    both = first["test_both"]
    assert not both.passed
    assert both.calls[0].result == repr(sorted(CHANNELS))
    assert first["test_record"].passed


@pytest.mark.parametrize("channel", CHANNELS)
def test_nothing_reaches_a_later_test_of_the_same_submission(outcomes, channel):
    recall = outcomes[0]["test_recall"]
    shown = recall.output + recall.reason + repr(recall.calls)
    assert f"'{channel}'" not in shown and SECRET not in shown
    assert recall.passed, recall.reason


def test_nothing_reaches_the_next_submission(outcomes):
    recall = outcomes[1]["test_recall"]
    assert recall.passed and SECRET not in recall.output + recall.reason + repr(recall.calls)
