// NumPy C API access shared by the binding translation units: one of them
// (module.cpp) defines GPUPY_NUMPY_IMPORT and calls import_array().
#pragma once

#define PY_ARRAY_UNIQUE_SYMBOL GPUPY_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#ifndef GPUPY_NUMPY_IMPORT
#define NO_IMPORT_ARRAY
#endif
#include <Python.h>
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
