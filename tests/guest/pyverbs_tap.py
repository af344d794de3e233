#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Run rdma-core's own test suite (pyverbs) on one device and print TAP.

The plan is fixed by EXPECTED (test ids, one a line, "#" comments): one
line for each listed test, and one for all the tests not listed.  A
listed test that ran is "ok" or "not ok"; one that rdma-core skipped or
that never ran is a "not ok" with its reason, so a regression that turns
passes into skips cannot go unseen.  A listed test the device cannot run
here (ATOMIC WRITE where the kernel's verbs lack it) is a "# SKIP".  A
test that runs and is not listed is a "#" comment, to be added to the
list, and the last line fails if one of them failed.  Other vendors' tests
(mlx5's, EFA's) that are not listed do not run: they skip on vhca.

Usage: pyverbs_tap.py TESTS_DIR DEVICE EXPECTED
"""
import os
import sys
import time
import traceback
import unittest
from importlib.machinery import SourceFileLoader

tests_dir, dev, expected_file = sys.argv[1], sys.argv[2], sys.argv[3]
with open(expected_file) as f:
    expected = [x.strip() for x in f if x.strip() and not x.startswith('#')]
sys.path.insert(0, tests_dir)
sys.argv = [sys.argv[0], '--dev', dev]
from args_parser import parser  # noqa: E402  (rdma-core's, from tests_dir)

tests = SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
parser.parse_args()

# A kernel whose verbs lack ATOMIC WRITE (6.1) gives a device without it
# (IB_UVERBS_DEVICE_ATOMIC_WRITE, bit 40), on which rdma-core skips its
# ATOMIC WRITE tests: those are not expected then, and say so.
from pyverbs.device import Context  # noqa: E402
with Context(name=dev) as ctx:
    caps = ctx.query_device_ex().device_cap_flags_ex
absent = set()
if not caps & (1 << 40):
    absent = {t for t in expected if 'atomic_write' in t}
print('1..%d' % (len(expected) + 1), flush=True)


class Tap(unittest.TestResult):
    n = 0
    ran = set()
    skipped = {}
    unlisted = []       # the unlisted tests that ran, and how
    took = []           # (seconds, test id), for the slowest at the end

    def startTest(self, test):
        super().startTest(test)
        self.t0 = time.monotonic()

    def stopTest(self, test):
        super().stopTest(test)
        Tap.took.append((time.monotonic() - self.t0, test.id()))

    def emit(self, ok, test, detail=None):
        Tap.ran.add(test.id())
        if test.id() not in expected:
            Tap.unlisted.append((ok, test.id()))
            print('# not in %s: %sok %s' % (expected_file, '' if ok else 'not ', test.id()))
        else:
            Tap.n += 1
            print('%sok %d - %s' % ('' if ok else 'not ', Tap.n, test.id()), flush=True)
        for line in (detail or '').splitlines()[-15:]:
            print('#   ' + line)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.emit(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.emit(False, test, ''.join(traceback.format_exception(*err)))

    def addError(self, test, err):
        super().addError(test, err)
        self.emit(False, test, ''.join(traceback.format_exception(*err)))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.emit(False, test, 'unexpected success')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        Tap.skipped[test.id()] = reason
        if test.id() in absent:
            Tap.ran.add(test.id())
            Tap.n += 1
            print('ok %d - %s # SKIP %s has no ATOMIC WRITE' % (Tap.n, test.id(), dev))
        else:
            print('# skipped %s: %s' % (test.id(), reason))


def flat(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flat(t)
        else:
            yield t


# Another vendor's tests (mlx5's, EFA's) check the device's driver and
# skip on any other, each after setting up its resources: a second or
# three apiece under TCG, a third of the suite's time.  They are left out
# unless listed (one of mlx5's timestamp tests runs on any device).
VENDOR = ('tests.test_mlx5', 'tests.test_efa')
run, vendor = [], 0
for t in flat(unittest.defaultTestLoader.loadTestsFromModule(tests)):
    if t.id().startswith(VENDOR) and t.id() not in expected:
        vendor += 1
    else:
        run.append(t)
result = Tap()
unittest.TestSuite(run).run(result)
print('# %d listed tests ran, %d tests skipped by rdma-core, %d of other '
      'vendors\' devices left out' % (Tap.n, len(Tap.skipped), vendor))
print('# %.0f s in the tests that ran, %.0f s in those rdma-core skipped' %
      (sum(s for s, t in Tap.took if t not in Tap.skipped),
       sum(s for s, t in Tap.took if t in Tap.skipped)))
print('# slowest: ' + ', '.join('%s %.0fs' % (t.split('.')[-1], s)
                                 for s, t in sorted(Tap.took)[-8:][::-1]))
missing = 0
for t in expected:
    if t in Tap.ran:
        continue
    missing += 1
    Tap.n += 1
    print('not ok %d - %s ran before and did not now (%s)' %
          (Tap.n, t, 'skipped: ' + Tap.skipped[t] if t in Tap.skipped
           else 'no such test'))
bad = [t for ok, t in Tap.unlisted if not ok]
Tap.n += 1
print('%sok %d - the %d tests not in %s that ran passed%s' %
      ('not ' if bad else '', Tap.n, len(Tap.unlisted), expected_file,
       ' (failed: %s)' % ', '.join(bad) if bad else ''))
sys.exit(0 if result.wasSuccessful() and not missing else 1)
