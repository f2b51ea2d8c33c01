"""Backends turn a resolved experiment into results tables: `sim` (the Rust simulator) and
`emu` (kernel TCP in network namespaces over the same netmodel links)."""
