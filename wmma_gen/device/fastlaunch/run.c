/* run, lookup: a call-site cache hit (outputs, capture keep, fire).
 * Included by _fastlaunch.c (one translation unit). */

/* run(entry, tensors, device, stream, env) -> [outputs] or None
 * entry: (token, outs, plan, scratch, ...) as torch/replay.py records, each of outs a (shape, strides,
 * dtype) to allocate or a tensor to hand out as it is (a kept buffer: replay.py's record);
 * env: (gen [int], captures [int], empty_strided, held). None (nothing done) when the token is stale
 * (token.gen != gen[0]) or has scratch buffers: replay.py's Python path handles those.
 * run_addrs is run with the tensors' addresses already read (lookup's key read them). */
static PyObject *kw_dtype_device;

/* (shape, strides, dtype, fast, index): fast(shape, strides, dtype) when it gives a tensor on device
 * `index` (get_device(); torch's _empty_strided_cuda allocates on the current GPU, which may be
 * another), else NULL with no exception set: the caller allocates with empty_strided. */
static PyObject *fast_alloc(PyObject *o) {
    PyObject *args[3] = {PyTuple_GET_ITEM(o, 0), PyTuple_GET_ITEM(o, 1), PyTuple_GET_ITEM(o, 2)};
    PyObject *t = PyObject_Vectorcall(PyTuple_GET_ITEM(o, 3), args, 3, NULL);
    if (t == NULL) { PyErr_Clear(); return NULL; }
    PyObject *where = PyObject_CallMethodNoArgs(t, get_device_name);
    int same = where != NULL && PyObject_RichCompareBool(where, PyTuple_GET_ITEM(o, 4), Py_EQ) == 1;
    Py_XDECREF(where);
    if (!same) { PyErr_Clear(); Py_DECREF(t); return NULL; }
    return t;
}

static PyObject *run_addrs(PyObject *entry, PyObject *ts, PyObject *device, PyObject *stream, PyObject *env,
                           uint64_t *addrs) {
    PyObject *token = PyTuple_GET_ITEM(entry, 0), *outs = PyTuple_GET_ITEM(entry, 1), *plan = PyTuple_GET_ITEM(entry, 2);
    PyObject *gen = PyObject_GetAttr(token, gen_name);
    if (gen == NULL) return NULL;
    int same = PyObject_RichCompareBool(gen, PyList_GET_ITEM(PyTuple_GET_ITEM(env, 0), 0), Py_EQ);
    Py_DECREF(gen);
    if (same < 0) return NULL;
    PyObject *scratch = PyObject_GetAttr(token, scratch_name);
    if (scratch == NULL) return NULL;
    int has = PyObject_IsTrue(scratch);
    Py_DECREF(scratch);
    if (has < 0) return NULL;
    if (!same || has || !PyTuple_Check(outs) || !PyTuple_Check(plan)) Py_RETURN_NONE;
    Py_ssize_t nt = PyTuple_GET_SIZE(ts), no = PyTuple_GET_SIZE(outs);
    if (nt + no + 1 > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "run takes at most %d tensors and outputs", MAX_VALUES - 1);
        return NULL;
    }
    PyObject *made = PyList_New(no);
    if (made == NULL) return NULL;
    PyObject *empty = PyTuple_GET_ITEM(env, 2);
    for (Py_ssize_t i = 0; i < no; i++) {
        PyObject *o = PyTuple_GET_ITEM(outs, i), *t;
        if (!PyTuple_Check(o)) {                  /* a kept buffer */
            Py_INCREF(o);
            t = o;
        } else if (PyTuple_GET_SIZE(o) != 3 && PyTuple_GET_SIZE(o) != 5) {
            PyErr_SetString(PyExc_TypeError, "outs entries must be (shape, strides, dtype[, fast, index]) or a tensor");
            goto fail;
        } else {
            t = PyTuple_GET_SIZE(o) == 5 ? fast_alloc(o) : NULL;
            if (t == NULL) {
                PyObject *call[4] = {PyTuple_GET_ITEM(o, 0), PyTuple_GET_ITEM(o, 1), PyTuple_GET_ITEM(o, 2), device};
                t = PyObject_Vectorcall(empty, call, 2, kw_dtype_device);
                if (t == NULL) goto fail;
            }
        }
        PyList_SET_ITEM(made, i, t);
        if (as_addr(t, &addrs[nt + i]) < 0) goto fail;
    }
    addrs[nt + no] = 0;
    PyObject *caps = PyList_GET_ITEM(PyTuple_GET_ITEM(env, 1), 0);
    int capturing = PyObject_IsTrue(caps);
    if (capturing < 0) goto fail;
    if (capturing) {          /* a graph capture: its replays write these (device/operand.py) */
        PyObject *values = PyTuple_New(nt + no);
        if (values == NULL) goto fail;
        for (Py_ssize_t i = 0; i < nt + no; i++) {
            PyObject *v = i < nt ? PyTuple_GET_ITEM(ts, i) : PyList_GET_ITEM(made, i - nt);
            Py_INCREF(v);
            PyTuple_SET_ITEM(values, i, v);
        }
        PyObject *r = PyObject_Call(PyTuple_GET_ITEM(env, 3), values, NULL);
        Py_DECREF(values);
        if (r == NULL) goto fail;
        Py_DECREF(r);
    }
    PyObject *r = fire_addrs(plan, addrs, nt + no + 1, stream);
    if (r == NULL) goto fail;
    Py_DECREF(r);
    return made;
fail:
    Py_DECREF(made);
    return NULL;
}

static int run_args_ok(PyObject *entry, PyObject *ts, PyObject *env) {
    return PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) >= 4 && PyTuple_Check(ts) && PyTuple_Check(env)
        && PyTuple_GET_SIZE(env) == 4;
}

static PyObject *run(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !run_args_ok(args[0], args[1], args[4])) {
        PyErr_SetString(PyExc_TypeError, "run(entry: tuple of 4 or more, tensors: tuple, device, stream, env: 4-tuple)");
        return NULL;
    }
    Py_ssize_t nt = PyTuple_GET_SIZE(args[1]);
    if (nt > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "run takes at most %d tensors", MAX_VALUES);
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    for (Py_ssize_t i = 0; i < nt; i++)
        if (as_addr(PyTuple_GET_ITEM(args[1], i), &addrs[i]) < 0) return NULL;
    return run_addrs(args[0], args[1], args[2], args[3], args[4], addrs);
}

/* lookup(entries, head, tensors[, stream, env]) -> (key, entry or None, outputs or None): the call's key,
 * its entry and, with stream and env given and a recorded entry, the outputs of running it (run), with
 * the addresses and the device the key read. */
static PyObject *lookup(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if ((nargs != 3 && nargs != 5) || !PyDict_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])
            || (nargs == 5 && (!PyTuple_Check(args[4]) || PyTuple_GET_SIZE(args[4]) != 4))) {
        PyErr_SetString(PyExc_TypeError, "lookup(entries: dict, head: tuple, tensors: tuple[, stream, env: 4-tuple])");
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    PyObject *device = NULL;
    PyObject *k = build_key(args[1], args[2], addrs, &device);
    if (k == NULL) return NULL;
    PyObject *e = PyDict_GetItemWithError(args[0], k);
    if (e == NULL && PyErr_Occurred()) { Py_DECREF(k); Py_XDECREF(device); return NULL; }
    PyObject *made = NULL;
    if (nargs == 5 && e != NULL && run_args_ok(e, args[2], args[4])) {
        if (device == NULL) {
            PyErr_SetString(PyExc_TypeError, "lookup: the first tensor of a recorded key is None");
            Py_DECREF(k);
            return NULL;
        }
        Py_INCREF(e);            /* kept while run may call Python (held), which could drop it from entries */
        made = run_addrs(e, args[2], device, args[3], args[4], addrs);
        Py_DECREF(e);
        if (made == NULL) { Py_DECREF(k); Py_DECREF(device); return NULL; }
    }
    Py_XDECREF(device);
    PyObject *r = PyTuple_Pack(3, k, e ? e : Py_None, made ? made : Py_None);
    Py_DECREF(k);
    Py_XDECREF(made);
    return r;
}
