"""Backends turn a resolved experiment into a results directory. Only `sim` exists so far."""
