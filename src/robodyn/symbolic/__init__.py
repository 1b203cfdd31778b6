"""Customized symbolic models and code generation (Khalil & Dombre §9.6, the SYMORO method).

    m = rd.symbolic.customized_model(robot, "inverse_dynamics", parameters="base")
    print(m)                      # the model as Khalil & Dombre's listings print it
    m.operation_count()           # {"mul": ..., "add": ..., "sincos": ...}
    m.c_source(); m.numpy_function(); m.matlab_source(); m.julia_source()
    f = rd.compile(robot, "inverse_dynamics")   # compiled C, same call as rd.inverse_dynamics
    p = rd.symbolic.recorded_model(robot, "gibbs_appell_inverse")   # other formulations, customized and counted
    F = rd.symbolic.to_casadi(robot, "forward_dynamics")           # a casadi.Function (robodyn[casadi])
"""

from robodyn.symbolic.compile import CompiledModel, compile
from robodyn.symbolic.casadi_model import CasadiUnavailableError, to_casadi
from robodyn.symbolic.derivative_model import derivative_model
from robodyn.symbolic.kinematics_model import kinematics_model
from robodyn.native.build import CompileError, CompilerNotFoundError, CompileTimeoutError
from robodyn.symbolic.lagrange import ClosedForm, closed_form, parallelogram, planar_bodies
from robodyn.symbolic.models import KINDS, CustomizedModel, customized_model
from robodyn.symbolic.formulations import MODELS as RECORDED_MODELS, recorded_model

__all__ = ("KINDS", "ClosedForm", "CompileError", "CompileTimeoutError", "CompiledModel", "CompilerNotFoundError",
           "CustomizedModel", "closed_form", "compile", "customized_model", "parallelogram", "planar_bodies",
           "RECORDED_MODELS", "recorded_model", "CasadiUnavailableError", "to_casadi", "derivative_model",
           "kinematics_model")
