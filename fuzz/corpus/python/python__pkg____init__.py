"""A small package exercising the call-resolution rules."""
from .api import get

__all__ = ["get"]
