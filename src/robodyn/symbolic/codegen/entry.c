#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#define RD_MAXARGS 8
#define RD_SLOTS 3
#define RD_VARIANT_CAPSULE "robodyn.rdmodel.variant.1"
typedef struct { const char *name; int ndim; npy_intp shape[2]; } rd_arg;
typedef struct {
    int nargs;
    rd_arg args[RD_MAXARGS];
    int out_ndim;
    npy_intp out_shape[2];
    int (*fn)(const double *const *in, double *out);  /* 0, or a status: the general path raises */
} rd_variant;

/* the keyword arguments a compiled model may take, as they are named in the C function */
static const char *const rd_slot_name[RD_SLOTS] = {"gravity", "wrenches", "params"};

typedef struct {
    PyObject_HEAD
    PyObject *general;                 /* called with the same arguments when the entry declines */
    PyObject *capsule[2];              /* variants without / with external wrenches (NULL: not loaded) */
    const rd_variant *variant[2];
    int source[2][RD_MAXARGS];         /* argument k of variant w: positional index, or RD_MAXARGS + slot */
    int joints;                        /* positional arguments of the fast case */
    PyObject *keyword[RD_SLOTS];       /* interned names of the keywords of the kind (NULL: not taken) */
    PyObject *fallback[RD_SLOTS];      /* value for a keyword absent or None (NULL: none) */
    PyObject *out_key;                 /* interned "out": the caller's result buffer */
} rd_entry;

static int rd_slot(const rd_entry *self, PyObject *key) {
    for (int s = 0; s < RD_SLOTS; ++s)
        if (self->keyword[s] != NULL && key == self->keyword[s]) return s;
    if (!PyUnicode_Check(key)) return -1;
    for (int s = 0; s < RD_SLOTS; ++s)
        if (self->keyword[s] != NULL && PyUnicode_Compare(key, self->keyword[s]) == 0) return s;
    return -1;
}

/* the values of obj when it is an aligned, native-order, C-contiguous float64 array of exactly arg's shape
   holding finite numbers; else NULL */
static const double *rd_data(PyObject *obj, const rd_arg *arg) {
    if (!PyArray_Check(obj)) return NULL;
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_NDIM(a) != arg->ndim || PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a)
        || !PyArray_CHKFLAGS(a, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)) return NULL;
    long size = 1;
    for (int d = 0; d < arg->ndim; ++d) {
        if (PyArray_DIM(a, d) != arg->shape[d]) return NULL;
        size *= (long)arg->shape[d];
    }
    const double *x = (const double *)PyArray_DATA(a);
    return rd_finite(x, size) ? x : NULL;
}

/* obj's data when it is a writeable, aligned, native-order, C-contiguous float64 array of exactly the result's
   shape that overlaps none of the nargs inputs in[k] (of size[k] doubles); else NULL */
static double *rd_buffer(PyObject *obj, const rd_variant *v, const double *const *in, const long *size) {
    if (!PyArray_Check(obj)) return NULL;
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_NDIM(a) != v->out_ndim || PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a)
        || !PyArray_CHKFLAGS(a, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE)) return NULL;
    long count = 1;
    for (int d = 0; d < v->out_ndim; ++d) {
        if (PyArray_DIM(a, d) != v->out_shape[d]) return NULL;
        count *= (long)v->out_shape[d];
    }
    double *x = (double *)PyArray_DATA(a);
    for (int k = 0; k < v->nargs; ++k)
        if (x < in[k] + size[k] && in[k] < x + count) return NULL;  /* the general path refuses an overlap */
    return x;
}

/* 1: one state evaluated into *result; 0: declined (the general path decides); -1: an error is set */
static int rd_fast(const rd_entry *self, PyObject *args, PyObject *kwargs, PyObject **result) {
    PyObject *kw[RD_SLOTS] = {NULL, NULL, NULL};
    PyObject *buffer = NULL;
    if (PyTuple_GET_SIZE(args) != self->joints) return 0;
    if (kwargs != NULL) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(kwargs, &pos, &key, &value)) {
            if (key == self->out_key || (PyUnicode_Check(key) && PyUnicode_Compare(key, self->out_key) == 0)) {
                if (value != Py_None) buffer = value;
                continue;
            }
            int s = rd_slot(self, key);
            if (s < 0) return 0;
            if (value != Py_None) kw[s] = value;
        }
    }
    int w = kw[1] != NULL;
    const rd_variant *v = self->variant[w];
    if (v == NULL) return 0;
    const double *in[RD_MAXARGS];
    long size[RD_MAXARGS];
    for (int k = 0; k < v->nargs; ++k) {
        int src = self->source[w][k];
        PyObject *a = src < RD_MAXARGS ? PyTuple_GET_ITEM(args, src)
                      : kw[src - RD_MAXARGS] != NULL ? kw[src - RD_MAXARGS] : self->fallback[src - RD_MAXARGS];
        if (a == NULL || (in[k] = rd_data(a, &v->args[k])) == NULL) return 0;
        size[k] = (long)v->args[k].shape[0] * (v->args[k].ndim > 1 ? (long)v->args[k].shape[1] : 1L);
    }
    if (buffer != NULL) {  /* the caller's array: nothing allocated */
        double *x = rd_buffer(buffer, v, in, size);
        if (x == NULL || v->fn(in, x) != 0) return 0;  /* a bad buffer, singular or overflow: the general path */
        Py_INCREF(buffer);
        *result = buffer;
        return 1;
    }
    PyObject *out = PyArray_SimpleNew(v->out_ndim, (npy_intp *)v->out_shape, NPY_DOUBLE);
    if (out == NULL) return -1;
    if (v->fn(in, (double *)PyArray_DATA((PyArrayObject *)out)) != 0) {  /* singular or overflow */
        Py_DECREF(out);
        return 0;
    }
    *result = out;
    return 1;
}

static PyObject *rd_entry_call(PyObject *obj, PyObject *args, PyObject *kwargs) {
    rd_entry *self = (rd_entry *)obj;
    PyObject *out = NULL;
    int done = rd_fast(self, args, kwargs, &out);
    if (done != 0) return done > 0 ? out : NULL;
    if (self->general == NULL) {  /* cleared by the garbage collector */
        PyErr_SetString(PyExc_RuntimeError, "this compiled model was garbage-collected");
        return NULL;
    }
    return PyObject_Call(self->general, args, kwargs);
}

static PyObject *rd_entry_fast(PyObject *obj, PyObject *args, PyObject *kwargs) {
    PyObject *out = NULL;
    int done = rd_fast((rd_entry *)obj, args, kwargs, &out);
    if (done != 0) return done > 0 ? out : NULL;
    Py_RETURN_NONE;
}

static PyObject *rd_entry_set_variant(PyObject *obj, PyObject *args) {
    rd_entry *self = (rd_entry *)obj;
    int w;
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "iO:set_variant", &w, &cap)) return NULL;
    const rd_variant *v = (const rd_variant *)PyCapsule_GetPointer(cap, RD_VARIANT_CAPSULE);
    if (v == NULL) return NULL;
    if (w < 0 || w > 1 || v->nargs > RD_MAXARGS || v->nargs < self->joints) {
        PyErr_SetString(PyExc_ValueError, "set_variant: variant does not fit this entry");
        return NULL;
    }
    for (int k = 0; k < v->nargs; ++k) {
        int src = -1;
        if (k < self->joints) src = k;
        else
            for (int s = 0; s < RD_SLOTS; ++s)
                if (strcmp(v->args[k].name, rd_slot_name[s]) == 0 && self->keyword[s] != NULL) src = RD_MAXARGS + s;
        if (src < 0) {
            PyErr_Format(PyExc_ValueError, "set_variant: argument %s is not taken by this entry", v->args[k].name);
            return NULL;
        }
        self->source[w][k] = src;
    }
    Py_INCREF(cap);
    Py_XSETREF(self->capsule[w], cap);
    self->variant[w] = v;
    Py_RETURN_NONE;
}

static int rd_entry_traverse(PyObject *obj, visitproc visit, void *arg) {
    rd_entry *self = (rd_entry *)obj;
    Py_VISIT(self->general);
    for (int w = 0; w < 2; ++w) Py_VISIT(self->capsule[w]);
    for (int s = 0; s < RD_SLOTS; ++s) { Py_VISIT(self->keyword[s]); Py_VISIT(self->fallback[s]); }
    return 0;
}

static int rd_entry_clear(PyObject *obj) {
    rd_entry *self = (rd_entry *)obj;
    Py_CLEAR(self->general);
    for (int w = 0; w < 2; ++w) { Py_CLEAR(self->capsule[w]); self->variant[w] = NULL; }
    for (int s = 0; s < RD_SLOTS; ++s) { Py_CLEAR(self->keyword[s]); Py_CLEAR(self->fallback[s]); }
    Py_CLEAR(self->out_key);
    return 0;
}

static void rd_entry_dealloc(PyObject *obj) {
    PyObject_GC_UnTrack(obj);
    rd_entry_clear(obj);
    Py_TYPE(obj)->tp_free(obj);
}

/* Entry(general, joints, fallbacks): fallbacks maps each keyword the kind takes to its value for None */
static PyObject *rd_entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *general, *fallbacks;
    int joints;
    static char *names[] = {"general", "joints", "fallbacks", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OiO!:Entry", names, &general, &joints, &PyDict_Type, &fallbacks))
        return NULL;
    if (joints < 1 || joints > RD_MAXARGS) {
        PyErr_SetString(PyExc_ValueError, "Entry: joints out of range");
        return NULL;
    }
    rd_entry *self = (rd_entry *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    Py_INCREF(general);
    self->general = general;
    self->joints = joints;
    self->out_key = PyUnicode_InternFromString("out");
    if (self->out_key == NULL) { Py_DECREF(self); return NULL; }
    for (int s = 0; s < RD_SLOTS; ++s) {
        PyObject *value = PyDict_GetItemString(fallbacks, rd_slot_name[s]);
        if (value == NULL) continue;
        self->keyword[s] = PyUnicode_InternFromString(rd_slot_name[s]);
        if (self->keyword[s] == NULL) { Py_DECREF(self); return NULL; }
        if (value != Py_None) { Py_INCREF(value); self->fallback[s] = value; }
    }
    return (PyObject *)self;
}

static PyMethodDef rd_entry_methods[] = {
    {"fast", (PyCFunction)(void (*)(void))rd_entry_fast, METH_VARARGS | METH_KEYWORDS,
     "The result of the fast case, or None where a call would take the general path."},
    {"set_variant", rd_entry_set_variant, METH_VARARGS, "set_variant(w, capsule): the model without (0) or with (1) wrenches."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject rd_entry_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rdmodel.Entry",
    .tp_basicsize = sizeof(rd_entry),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One compiled model's call: one state in C, anything else through the general path.",
    .tp_new = rd_entry_new,
    .tp_dealloc = rd_entry_dealloc,
    .tp_traverse = rd_entry_traverse,
    .tp_clear = rd_entry_clear,
    .tp_call = rd_entry_call,
    .tp_methods = rd_entry_methods,
};

static struct PyModuleDef rd_module = {PyModuleDef_HEAD_INIT, "rdmodel", NULL, -1, NULL, NULL, NULL, NULL, NULL};
