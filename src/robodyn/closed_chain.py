"""The namespace ``rd.closed_chain``: closed kinematic chains, cut open into a tree (Khalil & Dombre).

- the model: :class:`ClosedChainRobot`, :class:`LoopClosure`, :func:`load_closed_chain`, and the built-in
  linkages :func:`planar_five_bar`, :func:`spatial_five_bar`;
- the loop equations: :func:`close_loops` (the passive joints from the active ones), :class:`LoopClosureError`,
  the constraint :func:`loop_residual` and its Jacobian :func:`loop_jacobian`;
- the dynamics: :func:`closed_chain_inverse_dynamics`, :func:`closed_chain_forward_dynamics`,
  :func:`closed_chain_model`.

Each name is imported on first use.  See docs/closed-chains.md.
"""

from types import MappingProxyType as _MappingProxyType

from robodyn.lazy import attach as _attach

_NAMES = _MappingProxyType({
    **{name: ("robodyn.model.closed_chain", name) for name in ("ClosedChainRobot", "LoopClosure", "load_closed_chain")},
    **{name: ("robodyn.model.five_bar", name) for name in ("planar_five_bar", "spatial_five_bar")},
    **{name: ("robodyn.dynamics.closed_chain", name) for name in (
        "close_loops", "LoopClosureError", "closed_chain_inverse_dynamics", "closed_chain_forward_dynamics",
        "closed_chain_model", "loop_jacobian", "loop_residual")},
})

__getattr__, __dir__ = _attach(globals(), _NAMES)
__all__ = tuple(_NAMES)
