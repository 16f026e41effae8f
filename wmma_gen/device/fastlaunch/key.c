/* shape_key: the torch lane's call-site key.
 * Included by _fastlaunch.c (one translation unit). */

/* shape_key(head, tensors): head + one bytes object holding, per tensor, its rank, shape, strides,
 * dtype (the dtype object's identity: torch dtypes are singletons), the hash of its torch.device (c10's
 * std::hash<Device>, type << 16 | index: distinct for distinct devices) and data_ptr() % 16 as int64s (rank -1 for a None tensor): wmma_gen/torch/replay.py's call-site key.
 * One bytes object hashes and compares as one memcmp. (device/native.py's Python twin builds a tuple
 * holding the same facts; a process uses one of the two throughout.) */
#define KEY_WORDS 1024

static int put_ints(PyObject *seq, int64_t *w, Py_ssize_t *at) {
    if (!PyTuple_Check(seq)) { PyErr_SetString(PyExc_TypeError, "shape / stride() must be tuples"); return -1; }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seq); i++) {
        if (*at >= KEY_WORDS) { PyErr_SetString(PyExc_ValueError, "too many tensor dims for one key"); return -1; }
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) return -1;
        w[(*at)++] = v;
    }
    return 0;
}

/* The key of (head, tensors); each tensor's data_ptr() into addrs[i] (0 for None: at most MAX_VALUES
 * tensors) and a new reference to tensors[0]'s device into *dev0 when dev0 is not NULL. */
static PyObject *build_key(PyObject *head, PyObject *ts, uint64_t *addrs, PyObject **dev0) {
    int64_t w[KEY_WORDS];
    Py_ssize_t at = 0;
    if (PyTuple_GET_SIZE(ts) > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "a key takes at most %d tensors", MAX_VALUES);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(ts); i++) {
        PyObject *t = PyTuple_GET_ITEM(ts, i);
        if (at + 8 > KEY_WORDS) { PyErr_SetString(PyExc_ValueError, "too many tensors for one key"); goto fail; }
        if (t == Py_None) { w[at++] = -1; addrs[i] = 0; continue; }
        PyObject *shape = PyObject_GetAttr(t, shape_name);
        if (shape == NULL) goto fail;
        w[at++] = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -2;
        int bad = put_ints(shape, w, &at);
        Py_DECREF(shape);
        if (bad) goto fail;
        PyObject *stride = PyObject_CallMethodNoArgs(t, stride_name);
        if (stride == NULL) goto fail;
        bad = put_ints(stride, w, &at);
        Py_DECREF(stride);
        if (bad || at + 5 > KEY_WORDS) {
            if (!bad) PyErr_SetString(PyExc_ValueError, "too many tensor dims for one key");
            goto fail;
        }
        PyObject *dtype = PyObject_GetAttr(t, dtype_name);
        if (dtype == NULL) goto fail;
        w[at++] = (int64_t)(intptr_t)dtype;
        Py_DECREF(dtype);        /* a torch dtype outlives the process's tensors: its address is its identity */
        PyObject *device = PyObject_GetAttr(t, device_name);
        if (device == NULL) goto fail;
        /* torch.device's hash is std::hash<c10::Device>: (type << 16 | index), one value per device */
        Py_hash_t h = PyObject_Hash(device);
        if (i == 0 && dev0 != NULL) *dev0 = device;      /* the outputs' device (run) */
        else Py_DECREF(device);
        if (h == -1 && PyErr_Occurred()) goto fail;
        if (as_addr(t, &addrs[i]) < 0) goto fail;
        w[at++] = (int64_t)(addrs[i] & 15);
    }
    Py_ssize_t nh = PyTuple_GET_SIZE(head);
    PyObject *k = PyTuple_New(nh + 1);
    if (k == NULL) goto fail;
    for (Py_ssize_t i = 0; i < nh; i++) {
        PyObject *h = PyTuple_GET_ITEM(head, i);
        Py_INCREF(h);
        PyTuple_SET_ITEM(k, i, h);
    }
    PyObject *b = PyBytes_FromStringAndSize((const char *)w, (Py_ssize_t)(at * sizeof(int64_t)));
    if (b == NULL) { Py_DECREF(k); goto fail; }
    PyTuple_SET_ITEM(k, nh, b);
    return k;
fail:
    if (dev0 != NULL) Py_CLEAR(*dev0);
    return NULL;
}

static PyObject *shape_key(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "shape_key(head: tuple, tensors: tuple)");
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    return build_key(args[0], args[1], addrs, NULL);
}
