#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Run rdma-core's own test suite (pyverbs) on one device and print TAP.

A test that ran is "ok" or "not ok"; a test rdma-core skipped (a feature
the device does not claim) is a "#" comment, never counted as a pass.

Every test listed in EXPECTED (ids, one a line, "#" comments) must run:
one that rdma-core skipped or that never ran is a "not ok" with its
reason, so a regression that turns passes into skips cannot go unseen.
A test that runs and is not listed is printed, to be added.

Usage: pyverbs_tap.py TESTS_DIR DEVICE EXPECTED
"""
import os
import sys
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
if not caps & (1 << 40):
    for t in [t for t in expected if 'atomic_write' in t]:
        expected.remove(t)
        print('# %s has no ATOMIC WRITE: %s is not expected to run' % (dev, t))


class Tap(unittest.TestResult):
    n = 0
    skipped_n = 0
    ran = set()
    skipped = {}

    def emit(self, ok, test, detail=None):
        Tap.n += 1
        Tap.ran.add(test.id())
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
        Tap.skipped_n += 1
        Tap.skipped[test.id()] = reason
        print('# skipped %s: %s' % (test.id(), reason))


suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
result = Tap()
suite.run(result)
print('# %d ran, %d skipped by rdma-core' % (Tap.n, Tap.skipped_n))
missing = 0
for t in expected:
    if t in Tap.ran:
        continue
    missing += 1
    Tap.n += 1
    print('not ok %d - %s ran before and did not now (%s)' %
          (Tap.n, t, 'skipped: ' + Tap.skipped[t] if t in Tap.skipped
           else 'no such test'))
for t in sorted(Tap.ran - set(expected)):
    print('# runs now and is not in %s: %s' % (expected_file, t))
Tap.n += 1
print('%sok %d - at least the %d tests of %s ran (%d)' %
      ('not ' if missing else '', Tap.n, len(expected), expected_file,
       len(Tap.ran)))
print('1..%d' % Tap.n)
sys.exit(0 if result.wasSuccessful() and not missing else 1)
