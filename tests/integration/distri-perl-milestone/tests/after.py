# SPDX-License-Identifier: MIT
# after.py - a Python module (Inline::Python, os-autoinst's testapi.py):
# only passes when the VM was rolled back to the menu.
from testapi import *


def run(self):
    assert_screen('grub-menu', 20)
