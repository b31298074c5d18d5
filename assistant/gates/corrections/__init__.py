"""The user's corrections of the gate (issue 23), in one home.

- `gate`: `CorrectedGate`, which lets a correction decide messages close to corrected ones;
- `actions`: what the "Wrong decision?" button does (`correct`, `Rerun`, `open_corrections`);
- `cli`: `memory-gate memory corrections list|export|import|delete`.

The corrections themselves are stored by `memory.corrections.CorrectionBook`. Part of the
gates: may import what they may (the gates' contract and labels, the local gate's text,
`memory`), never the turn or the evaluations. Nothing is imported here.
"""
