"""A fixed set of realistic chunk texts, used once when the int8 graph is derived: the derived
graph is kept only if every one of these embeds within cosine 0.985 of the fp32 computation.

They imitate what funes stores (agent prose, tool calls, tool output, code, long chunks near the
256-token limit); quantisation error grows with length, so most are long.
"""

CALIBRATION_TEXTS: tuple[str, ...] = (
    "Fix the flaky test in tests/test_store.py: it fails about one run in ten on CI.",
    "I'll start by reading the failing test and the lock helper it exercises, then run it in a "
    "loop to see how often it fails locally before changing anything.",
    'Bash {"command": "pytest -x tests/test_store.py::test_concurrent_writers -q --count=50", '
    '"description": "Run the concurrency test fifty times"}',
    "FAILED tests/test_store.py::test_concurrent_writers - AssertionError: assert 198 == 200\n"
    " +  where 198 = len(rows)\n"
    "1 failed, 49 passed in 41.27s",
    "The root cause is that both writer processes call merge_insert on the same table without "
    "holding the advisory lock: the second checkout does not see the first process's version, "
    "so its merge does not find the ids the first one just wrote and inserts them again. Two "
    "rows out of two hundred were duplicated in the failing run, which matches the window "
    "between checkout_latest() and the commit. The fix is to take the lock file before the "
    "checkout and release it after the commit, not just around the commit as we do now. I "
    "also want the test to fail deterministically rather than one time in ten, so I will add "
    "a barrier that makes both processes reach the merge at the same moment. After the change "
    "the loop of fifty runs passed every time, and the duplicate check in the summary reports "
    "zero. I left the timeout at thirty seconds because a writer that holds the lock longer "
    "than that is stuck and should be reported, not waited for.",
    "def acquire(path: Path, timeout: float = 30.0) -> int:\n"
    '    """Take the writer lock or raise after timeout seconds."""\n'
    "    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)\n"
    "    deadline = time.monotonic() + timeout\n"
    "    while True:\n"
    "        try:\n"
    "            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "            return fd\n"
    "        except BlockingIOError:\n"
    "            if time.monotonic() > deadline:\n"
    "                os.close(fd)\n"
    "                raise LockTimeout(f'{path} is held by another writer') from None\n"
    "            time.sleep(0.05)\n\n"
    "def release(fd: int) -> None:\n"
    "    fcntl.flock(fd, fcntl.LOCK_UN)\n"
    "    os.close(fd)\n",
    "We decided to keep the recency prior gentle instead of halving scores every thirty days: "
    "an old design decision that answers the question exactly should still win over a recent "
    "passage that only mentions the same words. The benchmark on the aged corpus showed that "
    "the halving lost a third of the first-rank hits, while a logarithmic prior lost none and "
    "still preferred the newer of two equally relevant passages. Users asked for the old "
    "behaviour to stay available, so the half-life remains a flag, off by default.",
    "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\nnpm ERR!\n"
    "npm ERR! While resolving: web@0.4.1\nnpm ERR! Found: react@18.3.1\n"
    'npm ERR! node_modules/react\nnpm ERR!   react@"^18.2.0" from the root project\nnpm ERR!\n'
    'npm ERR! Could not resolve dependency:\nnpm ERR! peer react@"^17.0.0" from '
    "react-beautiful-dnd@13.1.1\nnpm ERR! Fix the upstream dependency conflict, or retry this "
    "command with --force or --legacy-peer-deps to accept an incorrect (and potentially broken) "
    "dependency resolution.",
    "Can you check why the Docker build takes eight minutes now? It used to be under two.",
    "The build is slow because the COPY . . line comes before npm ci, so every source change "
    "invalidates the dependency layer and the whole node_modules tree is reinstalled from "
    "scratch. Moving COPY package.json package-lock.json ./ and RUN npm ci above the source copy "
    "lets Docker reuse the cached layer; I also added a .dockerignore for node_modules, dist and "
    ".git, which were being sent to the daemon as part of the build context (about 1.2 GB). With "
    "both changes a rebuild after editing one component takes 48 seconds. The remaining time is "
    "the TypeScript compile and the image export; multi-stage builds would shave the final image "
    "from 1.1 GB to about 180 MB but would not make the build itself faster, so I left that for "
    "a separate change and noted it in the TODO file together with the measurements above.",
)
