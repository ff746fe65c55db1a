import a.b.c
import a.b as m
from . import x
from .. import y as z
from ...pkg.mod import *
from __future__ import annotations
import os, sys
from x import (a,
    b as c,)
