#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Run rdma-core's own test suite (pyverbs) on one device and print TAP.

A test that ran is "ok" or "not ok"; a test rdma-core skipped (a feature
the device does not claim) is a "#" comment, never counted as a pass.

Usage: pyverbs_tap.py TESTS_DIR DEVICE
"""
import os
import sys
import traceback
import unittest
from importlib.machinery import SourceFileLoader

tests_dir, dev = sys.argv[1], sys.argv[2]
sys.path.insert(0, tests_dir)
sys.argv = [sys.argv[0], '--dev', dev]
from args_parser import parser  # noqa: E402  (rdma-core's, from tests_dir)

tests = SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
parser.parse_args()


class Tap(unittest.TestResult):
    n = 0
    skipped_n = 0

    def emit(self, ok, test, detail=None):
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
        Tap.skipped_n += 1
        print('# skipped %s: %s' % (test.id(), reason))


suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
result = Tap()
suite.run(result)
print('# %d ran, %d skipped by rdma-core' % (Tap.n, Tap.skipped_n))
print('1..%d' % Tap.n)
sys.exit(0 if result.wasSuccessful() and Tap.n else 1)
