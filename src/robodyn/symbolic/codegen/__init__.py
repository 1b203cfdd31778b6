"""Code generation for customized models: NumPy (batched), C99 (compiled with cffi), MATLAB, Julia."""
