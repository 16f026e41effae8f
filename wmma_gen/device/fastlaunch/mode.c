/* eager_mode, bind_mode: which path a torch op call takes.
 * Included by _fastlaunch.c (one translation unit). */

/* eager_mode(checks, grad_enabled, tensor_types, *tensors) -> 0 | 1 | 2: torch/runtime.py's eager_mode
 * (its doc). 0 (DISPATCH) when any of `checks` (callables) returns true or a tensor's type is not exactly
 * one of tensor_types; 2 (AUTOGRAD) when grad_enabled() and a tensor requires grad; else 1 (STRAIGHT). */
static PyObject *eager_mode(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "eager_mode(checks: tuple, grad_enabled, tensor_types: tuple, *tensors)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[0]); i++) {
        PyObject *r = PyObject_CallNoArgs(PyTuple_GET_ITEM(args[0], i));
        if (r == NULL) return NULL;
        int on = r != Py_None && PyObject_IsTrue(r);
        Py_DECREF(r);
        if (on) return PyLong_FromLong(0);
    }
    PyObject *g = PyObject_CallNoArgs(args[1]);
    if (g == NULL) return NULL;
    int grad = PyObject_IsTrue(g), needs = 0;
    Py_DECREF(g);
    for (Py_ssize_t i = 3; i < nargs; i++) {
        PyObject *t = args[i];
        if (t == Py_None) continue;
        PyObject *tp = (PyObject *)Py_TYPE(t);
        int plain = 0;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(args[2]); j++)
            plain |= tp == PyTuple_GET_ITEM(args[2], j);
        if (!plain) return PyLong_FromLong(0);
        if (grad && !needs) {
            PyObject *rg = PyObject_GetAttr(t, requires_grad_name);
            if (rg == NULL) return NULL;
            needs = rg == Py_True;
            Py_DECREF(rg);
        }
    }
    return PyLong_FromLong(needs ? 2 : 1);
}

/* bind_mode(checks, grad_enabled, tensor_types) -> mode(*tensors): eager_mode with its first three
 * arguments kept by the module (one call per op instead of a functools.partial around eager_mode). */
static PyObject *mode_args;        /* (checks, grad_enabled, tensor_types) */

static PyObject *mode(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *all[16];
    if (mode_args == NULL || nargs > 13) {
        PyErr_SetString(PyExc_TypeError, mode_args == NULL ? "mode: call bind_mode first" : "mode takes at most 13 tensors");
        return NULL;
    }
    for (int i = 0; i < 3; i++) all[i] = PyTuple_GET_ITEM(mode_args, i);
    for (Py_ssize_t i = 0; i < nargs; i++) all[3 + i] = args[i];
    return eager_mode(mod, all, 3 + nargs);
}

static PyObject *bind_mode(PyObject *mod, PyObject *args) {
    PyObject *checks, *grad, *types;
    if (!PyArg_ParseTuple(args, "O!OO!", &PyTuple_Type, &checks, &grad, &PyTuple_Type, &types)) return NULL;
    Py_XSETREF(mode_args, PyTuple_Pack(3, checks, grad, types));
    if (mode_args == NULL) return NULL;
    return PyObject_GetAttrString(mod, "mode");
}
