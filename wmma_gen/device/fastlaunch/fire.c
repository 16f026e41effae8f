/* fire: a plan's launches, each launcher given the addresses its indices pick.
 * Included by _fastlaunch.c (one translation unit). */

/* fire_addrs: every launch of `plan` ((launcher, indices), ...) with addrs[i] for index i (nv addresses).
 * A Launcher is patched and launched in C; any other launcher (the emulator's Python closure) is called
 * with a tuple of ints. */
static PyObject *fire_addrs(PyObject *plan, const uint64_t *addrs, Py_ssize_t nv, PyObject *s) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(plan); k++) {
        PyObject *step = PyTuple_GET_ITEM(plan, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(step, 1))) {
            PyErr_SetString(PyExc_TypeError, "plan entries must be (launcher, indices tuple)");
            return NULL;
        }
        PyObject *launcher = PyTuple_GET_ITEM(step, 0), *idx = PyTuple_GET_ITEM(step, 1);
        Py_ssize_t n = PyTuple_GET_SIZE(idx);
        int native = Py_TYPE(launcher) == &LauncherType;
        if (native && n != ((Launcher *)launcher)->nptr) {
            PyErr_Format(PyExc_ValueError, "plan entry %zd has %zd indices: its kernel takes %zd", k, n,
                         ((Launcher *)launcher)->nptr);
            return NULL;
        }
        PyObject *ptrs = native ? NULL : PyTuple_New(n);        /* a Python launch closure: a tuple of ints */
        if (!native && ptrs == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(idx, i));
            if (j < 0 || j >= nv) {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_IndexError, "value index %zd out of %zd", j, nv);
                Py_XDECREF(ptrs);
                return NULL;
            }
            if (native) {
                memcpy(((Launcher *)launcher)->buf + ((Launcher *)launcher)->offsets[i], &addrs[j], 8);
                continue;
            }
            PyObject *v = PyLong_FromUnsignedLongLong(addrs[j]);
            if (v == NULL) { Py_DECREF(ptrs); return NULL; }
            PyTuple_SET_ITEM(ptrs, i, v);
        }
        PyObject *r;
        if (native) {
            void *stream;
            if (as_stream((Launcher *)launcher, s, &stream) < 0) return NULL;
            r = go((Launcher *)launcher, stream);
        } else {
            r = PyObject_CallFunctionObjArgs(launcher, ptrs, s, NULL);
            Py_DECREF(ptrs);
        }
        if (r == NULL) return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_TRUE;
}

/* fire(plan, values, stream): every launch of a call shape with its addresses picked by index
 * (values: ints, None = 0, or objects with data_ptr()). */
static PyObject *fire(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fire(plan: tuple, values: tuple, stream)");
        return NULL;
    }
    Py_ssize_t nv = PyTuple_GET_SIZE(args[1]);
    if (nv > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "fire takes at most %d values, not %zd", MAX_VALUES, nv);
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    for (Py_ssize_t i = 0; i < nv; i++)
        if (as_addr(PyTuple_GET_ITEM(args[1], i), &addrs[i]) < 0) return NULL;
    return fire_addrs(args[0], addrs, nv, args[2]);
}
