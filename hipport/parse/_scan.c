/* The lexer's regions pass in C: the same token stream as Lexer's compiled regex
 * (hipport/parse/lexer.py), found by a byte loop instead of a backtracking engine.
 *
 * scan(data, prefixes, token_type)
 *     -> (identifiers, comments, strings, directives, braces, words, contexts)
 *   prefixes    words_table() of the candidate prefixes (word characters only)
 *   identifiers list of token_type(start, end, text): words starting with a prefix, in code
 *   comments    list of (start, end)
 *   strings     list of (start, end): literals, and a directive's quoted/bracketed operand
 *               when the directive is not an include
 *   directives  list of (start, name_start, name_end, path_start, path_end): start is the '#'
 *               line's anchor (a newline, or 0), path_* are -1 unless an include-like
 *               directive has a <...> or "..." operand (path_start is at the delimiter)
 *   braces      offsets of `{` and `}` in code, not on a directive line (Lexed.brace_offsets)
 *   words       each identifier's text as str (Lexed.words)
 *   contexts    {start: context} for each identifier, as names._context tells it (Lexed.contexts)
 *
 * directive_records(data, directives, directive_type) -> [directive_type(start, end, name,
 *     branch, path_start, path_end)]: lexer._directives in C, from scan()'s directive tuples.
 *
 * line_starts(data) -> [0, and the offset after each newline]: source.Source's line index.
 *
 * words_table(words) -> capsule; words_found(data, table[, first]) -> [i, ...]: the indices
 * of the `words` (a tuple of non-empty bytes) that occur anywhere in `data`, in one pass
 * (analysis._Plan's rule triggers; without this module, a `word in data` test each); with
 * `first`, only the first one found, and the pass stops there.
 * words_at(data, table) -> [(start, end), ...]: every place where one of the words starts
 * (overlapping places too), in order, each with the end of the first word (by index) that
 * starts there (the rules' name searches, _syntax.occurrences).
 *
 * define_records(data, directives, macro_type, names_only) -> Lexed.defines in C: for each
 * Directive record named b"define", macro_type(name, params, start, body_start, body_end,
 * name_start) as lexer._DEFINE reads it; with names_only, just the names.
 *
 * cmake_parse(data, command_type, arg_type) -> (commands, comments): parse.cmake.parse in C,
 * the same Command and Arg records (command_type(name, start, close, args, indent),
 * arg_type(start, end, quoted, text)) and comment spans, step for step as its regexes go.
 *
 * Regions(data, comments, strings, directives): where an offset sits (in a comment or literal,
 * on a directive line, the code before or after it), Lexed's methods of those names in C;
 * Lexer.lex binds them on each Lexed it makes (see the section below).
 *
 * word_before(data, end, span) -> (start, word): parse.braces.python_word_before.
 *
 * brace_pairs(data, offsets) -> (opens, closes, parents, balanced, innermost):
 * parse.braces.pair_braces, and Braces.innermost over the pairs as a bound method in C.
 *
 * Each step mirrors one alternative of the regex, in the regex's order; the Python regex
 * stays the reference (and the fallback where this module is not built), and the test suite
 * compares the two on every fixture and on generated input.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *MEMBER, *QUALIFIED, *PASTED, *PLAIN; /* a name's context (names._context) */

/* Byte classes, one table lookup each (filled by fill_classes at import): the scan asks
 * them of nearly every byte. */
enum { C_WORD = 1, C_ALPHA_ = 2, C_DIGIT = 4, C_ALNUM = 8, C_PLAIN = 16 };
static unsigned char CLASS[256];

static void fill_classes(void) {
    for (int c = 0; c < 256; c++) {
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        int digit = c >= '0' && c <= '9';
        int word = alpha || digit || c == '_';
        /* the regex's first skip class `[^/"'A-Za-z_0-9\n.#]`, consumed in a run */
        int plain = !(word || c == '/' || c == '"' || c == '\'' || c == '\n' || c == '.' || c == '#');
        CLASS[c] = (unsigned char)((word ? C_WORD : 0) | (alpha || c == '_' ? C_ALPHA_ : 0) |
                                   (digit ? C_DIGIT : 0) | (alpha || digit ? C_ALNUM : 0) | (plain ? C_PLAIN : 0));
    }
}

static inline int is_word(unsigned char c) { return CLASS[c] & C_WORD; }
static inline int is_alpha_(unsigned char c) { return CLASS[c] & C_ALPHA_; }
static inline int is_digit(unsigned char c) { return CLASS[c] & C_DIGIT; }
static inline int is_alnum(unsigned char c) { return CLASS[c] & C_ALNUM; }
static inline int is_plain(unsigned char c) { return CLASS[c] & C_PLAIN; }

/* The two bytes at p as one number, as the machine loads them (one 16-bit load, no shift):
 * the key of their flag in a Words' `pairs`. */
static inline unsigned pair_at(const unsigned char *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* The key of b0 followed by b1 (the tables are built, and a buffer's last byte is keyed, with
 * it: the last byte pairs with a 0). */
static inline unsigned pair_of_bytes(unsigned char b0, unsigned char b1) {
    unsigned char two[2] = {b0, b1};
    return pair_at(two);
}

/* Sets in `pairs` (65536 flags, one per pair of bytes) the flag of the first two bytes of a
 * word of `len` > 0 bytes at `b`; a word of one byte sets the flags of every second byte. */
static void mark_pair(unsigned char *pairs, const unsigned char *b, Py_ssize_t len) {
    unsigned first = len == 1 ? 0u : b[1], last = len == 1 ? 255u : b[1];
    for (unsigned b1 = first; b1 <= last; b1++)
        pairs[pair_of_bytes(b[0], (unsigned char)b1)] = 1;
}

/* A set of byte strings to look for, made once (words_table) and used on every file
 * (words_found, words_at). A position is a candidate when some word starts with its first two
 * bytes (a flag of `pairs`, a byte each: one load a position where a bit would cost a shift
 * and a mask; a word of one byte sets the flags of every second byte); there the
 * words are walked as a trie, one byte a step, so a position costs the length of the longest
 * word it starts, not a comparison per word that shares its first bytes (thirty `cu` words). */
typedef struct {
    Py_ssize_t n;              /* words */
    Py_ssize_t *len;           /* each word's length */
    int *same;                 /* per word: the next word of the same bytes (a higher index), or -1 */
    /* the trie: node 0.. ; a node is one byte of one or more words */
    int *child, *sibling, *term; /* term: the lowest word ending at the node, or -1 */
    unsigned char *byte;
    int nnodes;
    int root[256];             /* the node of each first byte, or -1 */
    unsigned char pairs[65536]; /* flag per key (pair_of_bytes) */
    PyObject *words;           /* the tuple, kept alive */
} Words;

static void words_free(PyObject *capsule) {
    Words *t = PyCapsule_GetPointer(capsule, "hipport.words");
    if (t == NULL)
        return;
    Py_XDECREF(t->words);
    PyMem_Free(t->len);
    PyMem_Free(t->same);
    PyMem_Free(t->child);
    PyMem_Free(t->sibling);
    PyMem_Free(t->term);
    PyMem_Free(t->byte);
    PyMem_Free(t);
}

/* A new trie node for byte c (the caller links it in); its index. */
static int new_node(Words *t, unsigned char c) {
    int k = t->nnodes++;
    t->child[k] = -1;
    t->sibling[k] = -1;
    t->term[k] = -1;
    t->byte[k] = c;
    return k;
}

static PyObject *words_table(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyTuple_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "words_table() takes a tuple of bytes");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(arg), bytes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *w = PyTuple_GET_ITEM(arg, i);
        if (!PyBytes_Check(w) || PyBytes_GET_SIZE(w) == 0) {
            PyErr_SetString(PyExc_ValueError, "words_table() takes non-empty bytes");
            return NULL;
        }
        bytes += PyBytes_GET_SIZE(w);
    }
    if (n > 1000000 || bytes > 100000000) {
        PyErr_SetString(PyExc_ValueError, "words_table(): too many words");
        return NULL;
    }
    Words *t = PyMem_Calloc(1, sizeof(Words));
    if (t == NULL)
        return PyErr_NoMemory();
    t->n = n;
    Py_INCREF(arg);
    t->words = arg;
    PyObject *capsule = PyCapsule_New(t, "hipport.words", words_free);
    if (capsule == NULL) {
        Py_DECREF(arg);
        PyMem_Free(t);
        return NULL;
    }
    /* from here on the capsule's destructor frees whatever was allocated */
    size_t cells = (size_t)n + 1, nodes = (size_t)bytes + 1;
    t->len = PyMem_Calloc(cells, sizeof(*t->len));
    t->same = PyMem_Calloc(cells, sizeof(int));
    t->child = PyMem_Calloc(nodes, sizeof(int));
    t->sibling = PyMem_Calloc(nodes, sizeof(int));
    t->term = PyMem_Calloc(nodes, sizeof(int));
    t->byte = PyMem_Calloc(nodes, 1);
    if (!t->len || !t->same || !t->child || !t->sibling || !t->term || !t->byte) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    for (int c = 0; c < 256; c++)
        t->root[c] = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *w = PyTuple_GET_ITEM(arg, i);
        const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(w);
        Py_ssize_t len = PyBytes_GET_SIZE(w);
        t->len[i] = len;
        t->same[i] = -1;
        mark_pair(t->pairs, b, len);
        int node = t->root[b[0]];
        if (node < 0)
            node = t->root[b[0]] = new_node(t, b[0]);
        for (Py_ssize_t k = 1; k < len; k++) {
            int ch = t->child[node];
            while (ch >= 0 && t->byte[ch] != b[k])
                ch = t->sibling[ch];
            if (ch < 0) {
                ch = new_node(t, b[k]);
                t->sibling[ch] = t->child[node];
                t->child[node] = ch;
            }
            node = ch;
        }
        if (t->term[node] < 0) {
            t->term[node] = (int)i;
        } else { /* the same bytes again: after the others of its chain (indices ascend) */
            int j = t->term[node];
            while (t->same[j] >= 0)
                j = t->same[j];
            t->same[j] = (int)i;
        }
    }
    return capsule;
}

/* The trie node of the byte after `node` at d[k], or -1. */
static inline int trie_step(const Words *t, int node, unsigned char c) {
    int ch = t->child[node];
    while (ch >= 0 && t->byte[ch] != c)
        ch = t->sibling[ch];
    return ch;
}

/* The first position from i on where some word may start (the flag of its two bytes is set),
 * or n. Most positions start no word: this loop is most of a search's time, four positions a
 * test where it can. */
static inline Py_ssize_t next_start(const unsigned char *pairs, const unsigned char *d, Py_ssize_t i,
                                    Py_ssize_t n) {
    for (; i + 4 < n; i += 4) {
        if (pairs[pair_at(d + i)] | pairs[pair_at(d + i + 1)] | pairs[pair_at(d + i + 2)] |
            pairs[pair_at(d + i + 3)])
            break;
    }
    for (; i + 1 < n; i++) {
        if (pairs[pair_at(d + i)])
            return i;
    }
    return i < n && pairs[pair_of_bytes(d[i], 0)] ? i : n;
}

typedef struct {
    const unsigned char *d;
    Py_ssize_t n;
    const Words *prefixes; /* the candidate prefixes' table (words_table) */
    PyObject *braces;     /* offsets of `{` and `}` in code outside directive lines */
    Py_ssize_t dir_end;   /* where the last directive line ends (continuations included) */
    Py_ssize_t *cstart, *cend, ncomments, ccap; /* the comments so far, in order */
} Scan;

/* Whether the text at i starts with one of the prefixes: a walk of their trie, past the
 * first two bytes' test (most words: no prefix starts with those). */
static int starts_with_prefix(const Scan *s, Py_ssize_t i) {
    const Words *t = s->prefixes;
    const unsigned char *d = s->d;
    if (!t->pairs[i + 1 < s->n ? pair_at(d + i) : pair_of_bytes(d[i], 0)])
        return 0;
    for (Py_ssize_t k = i, node = t->root[d[i]]; node >= 0;) {
        if (t->term[node] >= 0)
            return 1;
        if (++k >= s->n)
            return 0;
        node = trie_step(t, (int)node, d[k]);
    }
    return 0;
}

/* Length of the string-literal prefix `u8`, `u`, `U`, `L` tried at i, in the regex's order
 * (u8 first); `which` picks the option: 0 = u8, 1 = one letter, 2 = none. -1 if absent. */
static Py_ssize_t prefix_option(const Scan *s, Py_ssize_t i, int which) {
    const unsigned char *d = s->d;
    if (which == 0)
        return (i + 1 < s->n && d[i] == 'u' && d[i + 1] == '8') ? 2 : -1;
    if (which == 1)
        return (i < s->n && (d[i] == 'u' || d[i] == 'U' || d[i] == 'L')) ? 1 : -1;
    return 0;
}

/* `(?:u8|[uUL])?R?['"]` at i. */
static int opens_literal(const Scan *s, Py_ssize_t i) {
    const unsigned char *d = s->d;
    if (d[i] != 'u' && d[i] != 'U' && d[i] != 'L' && d[i] != 'R')
        return 0; /* most words: no literal prefix can start here */
    for (int w = 0; w < 3; w++) {
        Py_ssize_t p = prefix_option(s, i, w);
        if (p < 0)
            continue;
        Py_ssize_t j = i + p;
        if (j < s->n && d[j] == 'R')
            j++;
        if (j < s->n && (d[j] == '"' || d[j] == '\''))
            return 1;
    }
    return 0;
}

static Py_ssize_t word_end_in(const unsigned char *d, Py_ssize_t n, Py_ssize_t i) {
    while (i < n && is_word(d[i]))
        i++;
    return i;
}

static Py_ssize_t word_end(const Scan *s, Py_ssize_t i) { return word_end_in(s->d, s->n, i); }

/* `\.?[0-9](?:[0-9A-Za-z_.]|'(?=[0-9A-Za-z]))*` at i (caller checked the start). The
 * regex's `[eEpP][+-]` branch is never reached: the first branch already takes the letter. */
static Py_ssize_t number_end(const Scan *s, Py_ssize_t i) {
    const unsigned char *d = s->d;
    if (d[i] == '.')
        i++;
    i++; /* the digit */
    while (i < s->n) {
        unsigned char c = d[i];
        if (is_word(c) || c == '.')
            i++;
        else if (c == '\'' && i + 1 < s->n && is_alnum(d[i + 1]))
            i++;
        else
            break;
    }
    return i;
}

/* Whether `\n` at i opens a directive line: `\n[ \t]*#`. */
static int opens_directive(const Scan *s, Py_ssize_t i) {
    i++;
    while (i < s->n && (s->d[i] == ' ' || s->d[i] == '\t'))
        i++;
    return i < s->n && s->d[i] == '#';
}

static int append_offset(PyObject *list, Py_ssize_t at) {
    PyObject *o = PyLong_FromSsize_t(at);
    if (o == NULL)
        return -1;
    int r = PyList_Append(list, o);
    Py_DECREF(o);
    return r;
}

/* The regex's possessive skip: everything Python never sees (but the braces of code, which
 * only a run of plain bytes holds). Returns where it stops, or -1 on a Python error. */
static Py_ssize_t skip(Scan *s, Py_ssize_t i) {
    const unsigned char *d = s->d;
    Py_ssize_t n = s->n;
    while (i < n) {
        unsigned char c = d[i];
        if (is_plain(c)) {
            do {
                if ((d[i] == '{' || d[i] == '}') && i > s->dir_end && append_offset(s->braces, i) < 0)
                    return -1;
                i++;
            } while (i < n && is_plain(d[i]));
        } else if (c == '\n') {
            if (opens_directive(s, i))
                return i;
            i++;
        } else if (c == '.') {
            if (i + 1 < n && is_digit(d[i + 1]))
                i = number_end(s, i);
            else
                i++;
        } else if (c == '/') {
            if (i + 1 < n && (d[i + 1] == '/' || d[i + 1] == '*'))
                return i;
            i++;
        } else if (is_digit(c)) {
            i = number_end(s, i);
        } else if (is_alpha_(c)) {
            if (starts_with_prefix(s, i) || opens_literal(s, i))
                return i;
            i = word_end(s, i);
        } else {
            return i; /* quote or '#' */
        }
    }
    return i;
}

/* Raw string `PREFIX R"delim( ... )delim"`; returns its end or -1. */
static Py_ssize_t raw_string(const Scan *s, Py_ssize_t i) {
    const unsigned char *d = s->d;
    Py_ssize_t n = s->n;
    for (int w = 0; w < 3; w++) {
        Py_ssize_t p = prefix_option(s, i, w);
        if (p < 0)
            continue;
        Py_ssize_t j = i + p;
        if (!(j + 1 < n && d[j] == 'R' && d[j + 1] == '"'))
            continue;
        Py_ssize_t ds = j + 2, de = ds;
        while (de < n && de - ds <= 16 && !(d[de] == '(' || d[de] == ')' || d[de] == '\\' ||
                                            d[de] == ' ' || d[de] == '\t' || d[de] == '\n' ||
                                            d[de] == '\r' || d[de] == '\f' || d[de] == '\v'))
            de++;
        if (de - ds > 16 || de >= n || d[de] != '(')
            continue;
        Py_ssize_t dlen = de - ds;
        for (Py_ssize_t k = de + 1; k + dlen + 1 < n; k++) {
            if (d[k] == ')' && d[k + 1 + dlen] == '"' && memcmp(d + k + 1, d + ds, (size_t)dlen) == 0)
                return k + dlen + 2;
        }
    }
    return -1;
}

/* `PREFIX Q (?:\\\r?\n|\\.|[^Q\\\n])* Q?` for quote Q; returns its end or -1. */
static Py_ssize_t quoted(const Scan *s, Py_ssize_t i, unsigned char q) {
    const unsigned char *d = s->d;
    Py_ssize_t n = s->n;
    for (int w = 0; w < 3; w++) {
        Py_ssize_t p = prefix_option(s, i, w);
        if (p < 0 || i + p >= n || d[i + p] != q)
            continue;
        Py_ssize_t j = i + p + 1;
        while (j < n) {
            unsigned char c = d[j];
            if (c == '\\') {
                if (j + 2 < n && d[j + 1] == '\r' && d[j + 2] == '\n')
                    j += 3;
                else if (j + 1 < n)
                    j += 2;
                else
                    break;
            } else if (c == q) {
                return j + 1;
            } else if (c == '\n') {
                break;
            } else {
                j++;
            }
        }
        return j;
    }
    return -1;
}

static int append_pair(PyObject *list, Py_ssize_t a, Py_ssize_t b) {
    PyObject *t = Py_BuildValue("(nn)", a, b);
    if (t == NULL)
        return -1;
    int r = PyList_Append(list, t);
    Py_DECREF(t);
    return r;
}

static int name_is(const unsigned char *p, Py_ssize_t len, const char *word) {
    return (Py_ssize_t)strlen(word) == len && memcmp(p, word, (size_t)len) == 0;
}

/* lexer.logical_end(data, start, at_newline): where the logical line from `pos` ends (backslash-
 * newlines continue it), before a `\r`, or with at_newline at its `\n`; n when the data ends first. */
static Py_ssize_t line_end_from(const unsigned char *d, Py_ssize_t n, Py_ssize_t pos, int at_newline) {
    for (;;) {
        const unsigned char *nl = pos < n ? memchr(d + pos, '\n', (size_t)(n - pos)) : NULL;
        if (nl == NULL)
            return n;
        Py_ssize_t at = nl - d, body_end = at > 0 && d[at - 1] == '\r' ? at - 1 : at;
        if (body_end > 0 && d[body_end - 1] == '\\') {
            pos = at + 1;
            continue;
        }
        return at_newline ? at : body_end;
    }
}

/* A directive from its anchor at i (a newline, or the '#' at the file's start); appends to
 * `directives` (and to `strings` for a non-include operand); returns where it ends. */
static Py_ssize_t directive(Scan *s, Py_ssize_t i, PyObject *strings, PyObject *directives) {
    const unsigned char *d = s->d;
    Py_ssize_t n = s->n, start = i, j = i;
    if (d[j] == '\n')
        j++;
    s->dir_end = line_end_from(s->d, s->n, j, 0);
    while (j < n && (d[j] == ' ' || d[j] == '\t'))
        j++;
    j++; /* '#' */
    while (j < n && (d[j] == ' ' || d[j] == '\t'))
        j++;
    Py_ssize_t ns = j, ne = j;
    if (j < n && is_alpha_(d[j]))
        ne = j = word_end(s, j);
    Py_ssize_t k = j;
    while (k < n && (d[k] == ' ' || d[k] == '\t'))
        k++;
    Py_ssize_t ps = -1, pe = -1;
    if (k < n && (d[k] == '<' || d[k] == '"')) {
        unsigned char close = d[k] == '<' ? '>' : '"';
        Py_ssize_t m = k + 1;
        while (m < n && d[m] != close && d[m] != '\n')
            m++;
        if (m < n && d[m] == close) {
            const unsigned char *name = d + ns;
            Py_ssize_t len = ne - ns;
            if (name_is(name, len, "include") || name_is(name, len, "include_next") ||
                name_is(name, len, "import")) {
                ps = k;
                pe = m + 1;
            } else if (append_pair(strings, j, m + 1) < 0) {
                return -1;
            }
            j = m + 1;
        }
    }
    PyObject *t = Py_BuildValue("(nnnnn)", start, ns, ne, ps, pe);
    if (t == NULL || PyList_Append(directives, t) < 0) {
        Py_XDECREF(t);
        return -1;
    }
    Py_DECREF(t);
    return j;
}

static int add_comment(Scan *s, Py_ssize_t a, Py_ssize_t b) {
    if (s->ncomments == s->ccap) {
        Py_ssize_t cap = s->ccap ? 2 * s->ccap : 64;
        Py_ssize_t *ns = PyMem_Realloc(s->cstart, (size_t)cap * sizeof(Py_ssize_t));
        if (ns == NULL)
            return -1;
        s->cstart = ns;
        Py_ssize_t *ne = PyMem_Realloc(s->cend, (size_t)cap * sizeof(Py_ssize_t));
        if (ne == NULL)
            return -1;
        s->cend = ne;
        s->ccap = cap;
    }
    s->cstart[s->ncomments] = a;
    s->cend[s->ncomments] = b;
    s->ncomments++;
    return 0;
}

static inline int is_space_or_splice(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\';
}

static inline int is_py_space(unsigned char c) { /* bytes.strip()'s whitespace */
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Lexed.previous_code: the end of the last code byte before `offset`, stepping over spaces,
 * line splices and comments (all of which precede `offset`, so the ones seen so far). */
static Py_ssize_t previous_code(const Scan *s, Py_ssize_t offset) {
    const unsigned char *d = s->d;
    for (;;) {
        while (offset > 0 && is_space_or_splice(d[offset - 1]))
            offset--;
        Py_ssize_t lo = 0, hi = s->ncomments; /* last comment starting at or before offset-1 */
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (s->cstart[mid] <= offset - 1)
                lo = mid + 1;
            else
                hi = mid;
        }
        Py_ssize_t i = lo - 1;
        if (offset == 0 || i < 0 || s->cend[i] < offset)
            return offset;
        offset = s->cstart[i];
    }
}

/* names._find_context for the identifier at [a, b): `.`/`->` before it (member), `::` after a
 * name or `>` (qualified), `##` on either side (pasted), else "". */
static PyObject *context_of(const Scan *s, Py_ssize_t a, Py_ssize_t b) {
    const unsigned char *d = s->d;
    Py_ssize_t stop;
    if (a > 0 && !(d[a - 1] == ' ' || d[a - 1] == '\t' || d[a - 1] == '\r' || d[a - 1] == '\n' ||
                   d[a - 1] == '\\' || d[a - 1] == '/' || d[a - 1] == '.' || d[a - 1] == '>' ||
                   d[a - 1] == ':' || d[a - 1] == '#'))
        stop = -1; /* the byte before is code and none of those: nothing before it counts */
    else
        stop = previous_code(s, a);
    Py_ssize_t llen = stop < 0 ? 0 : (stop >= 2 ? 2 : stop);
    const unsigned char *last = stop < 0 ? d : d + stop - llen;
    if (llen == 2 && last[0] == '#' && last[1] == '#')
        return PASTED;
    Py_ssize_t w_end = b + 8 < s->n ? b + 8 : s->n, k = b;
    if (memchr(d + b, '#', (size_t)(w_end - b)) != NULL) {
        while (k < w_end && is_py_space(d[k]))
            k++;
        if (k + 1 < w_end && d[k] == '#' && d[k + 1] == '#')
            return PASTED;
    }
    if ((llen >= 1 && last[llen - 1] == '.') || (llen == 2 && last[0] == '-' && last[1] == '>'))
        return MEMBER;
    if (llen == 2 && last[0] == ':' && last[1] == ':') {
        Py_ssize_t lo = stop - 96 > 0 ? stop - 96 : 0, q = stop - 2;
        while (q > lo && is_py_space(d[q - 1]))
            q--;
        if (q > lo && (d[q - 1] == '>' || is_word(d[q - 1])))
            return QUALIFIED;
    }
    return PLAIN;
}

/* A record of `type` (a NamedTuple) holding the n new references in `items`, which it takes
 * over; NULL when one is NULL (a failed allocation) or the record cannot be made, every item
 * released then. */
static PyObject *new_record(PyTypeObject *type, Py_ssize_t n, PyObject **items) {
    PyObject *rec = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (items[k] == NULL)
            goto fail;
    }
    if ((rec = type->tp_alloc(type, n)) == NULL)
        goto fail;
    for (Py_ssize_t k = 0; k < n; k++)
        PyTuple_SET_ITEM(rec, k, items[k]);
    return rec;
fail:
    for (Py_ssize_t k = 0; k < n; k++)
        Py_XDECREF(items[k]);
    return NULL;
}

static PyObject *make_token(PyTypeObject *type, const Scan *s, Py_ssize_t a, Py_ssize_t b) {
    PyObject *items[3] = {PyLong_FromSsize_t(a), PyLong_FromSsize_t(b),
                          PyBytes_FromStringAndSize((const char *)s->d + a, b - a)};
    return new_record(type, 3, items);
}

static PyObject *scan(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    PyObject *table, *token_type;
    if (!PyArg_ParseTuple(args, "y*OO!", &buf, &table, &PyType_Type, &token_type))
        return NULL;
    const Words *prefixes = PyCapsule_GetPointer(table, "hipport.words");
    if (prefixes == NULL) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)token_type, &PyTuple_Type)) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_TypeError, "token_type must be a tuple subclass (a NamedTuple)");
        return NULL;
    }
    PyObject *braces = PyList_New(0), *words = PyList_New(0), *contexts = PyDict_New();
    Scan s = {(const unsigned char *)buf.buf, buf.len, prefixes, braces, -1, NULL, NULL, 0, 0};
    PyTypeObject *tt = (PyTypeObject *)token_type;
    PyObject *ids = PyList_New(0), *comments = PyList_New(0), *strings = PyList_New(0),
             *directives = PyList_New(0);
    if (!ids || !comments || !strings || !directives || !braces || !words || !contexts)
        goto fail;
    const unsigned char *d = s.d;
    Py_ssize_t n = s.n, i = (n >= 3 && memcmp(d, "\xef\xbb\xbf", 3) == 0) ? 3 : 0;
    /* A directive on the first line (after a BOM, maybe indented) has no newline before it. */
    Py_ssize_t k = i;
    while (k < n && (d[k] == ' ' || d[k] == '\t'))
        k++;
    if (k < n && d[k] == '#') {
        if ((i = directive(&s, i, strings, directives)) < 0)
            goto fail;
    } else {
        i = 0;
    }
    for (;;) {
        i = skip(&s, i);
        if (i < 0)
            goto fail;
        if (i >= n)
            break;
        unsigned char c = d[i];
        Py_ssize_t e;
        if (c == '/' && d[i + 1] == '/') { /* line comment; backslash-newline continues it */
            e = i + 2;
            while (e < n) {
                if (d[e] == '\\' && e + 1 < n && d[e + 1] == '\n')
                    e += 2;
                else if (d[e] == '\\' && e + 2 < n && d[e + 1] == '\r' && d[e + 2] == '\n')
                    e += 3;
                else if (d[e] == '\n')
                    break;
                else
                    e++;
            }
            if (append_pair(comments, i, e) < 0 || add_comment(&s, i, e) < 0)
                goto fail;
            i = e;
        } else if (c == '/') { /* block comment, to the first `*` `/` or the end */
            e = i + 2;
            while (e + 1 < n && !(d[e] == '*' && d[e + 1] == '/'))
                e++;
            e = e + 1 < n ? e + 2 : n;
            if (append_pair(comments, i, e) < 0 || add_comment(&s, i, e) < 0)
                goto fail;
            i = e;
        } else if (c == '\n') {
            if ((i = directive(&s, i, strings, directives)) < 0)
                goto fail;
        } else if ((e = raw_string(&s, i)) >= 0 || (e = quoted(&s, i, '"')) >= 0 ||
                   (e = quoted(&s, i, '\'')) >= 0) {
            if (append_pair(strings, i, e) < 0)
                goto fail;
            i = e;
        } else if (is_alpha_(c) && starts_with_prefix(&s, i)) {
            e = word_end(&s, i);
            PyObject *tok = make_token(tt, &s, i, e);
            if (tok == NULL || PyList_Append(ids, tok) < 0) {
                Py_XDECREF(tok);
                goto fail;
            }
            Py_DECREF(tok);
            PyObject *word = PyUnicode_FromStringAndSize((const char *)d + i, e - i); /* ASCII */
            if (word == NULL || PyList_Append(words, word) < 0) {
                Py_XDECREF(word);
                goto fail;
            }
            Py_DECREF(word);
            PyObject *at = PyLong_FromSsize_t(i);
            if (at == NULL || PyDict_SetItem(contexts, at, context_of(&s, i, e)) < 0) {
                Py_XDECREF(at);
                goto fail;
            }
            Py_DECREF(at);
            i = e;
        } else {
            i++; /* the regex's `other`: one byte no token starts with */
        }
    }
    PyBuffer_Release(&buf);
    PyMem_Free(s.cstart);
    PyMem_Free(s.cend);
    return Py_BuildValue("(NNNNNNN)", ids, comments, strings, directives, braces, words, contexts);
fail:
    PyBuffer_Release(&buf);
    PyMem_Free(s.cstart);
    PyMem_Free(s.cend);
    Py_XDECREF(contexts);
    Py_XDECREF(words);
    Py_XDECREF(braces);
    Py_XDECREF(ids);
    Py_XDECREF(comments);
    Py_XDECREF(strings);
    Py_XDECREF(directives);
    return NULL;
}

/* The `#if` path of the open blocks, as lexer._directives keeps it: ((block, branch), ...). */
static PyObject *branch_path(const Py_ssize_t *block, const Py_ssize_t *branch, Py_ssize_t depth) {
    PyObject *path = PyTuple_New(depth);
    for (Py_ssize_t k = 0; path != NULL && k < depth; k++) {
        PyObject *pair = Py_BuildValue("(nn)", block[k], branch[k]);
        if (pair == NULL)
            Py_CLEAR(path);
        else
            PyTuple_SET_ITEM(path, k, pair);
    }
    return path;
}

static PyObject *directive_records(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    PyObject *raw, *dtype_obj;
    if (!PyArg_ParseTuple(args, "y*O!O!", &buf, &PyList_Type, &raw, &PyType_Type, &dtype_obj))
        return NULL;
    PyTypeObject *dtype = (PyTypeObject *)dtype_obj;
    const unsigned char *d = buf.buf;
    Py_ssize_t n = buf.len, count = PyList_GET_SIZE(raw), depth = 0, next_block = 0;
    Py_ssize_t *block = PyMem_Malloc(((size_t)count + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *branch = PyMem_Malloc(((size_t)count + 1) * sizeof(Py_ssize_t));
    PyObject *out = PyList_New(count), *path = PyTuple_New(0);
    if (!PyType_IsSubtype(dtype, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "directive_type must be a tuple subclass (a NamedTuple)");
        goto fail;
    }
    if (block == NULL || branch == NULL || out == NULL || path == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t r = 0; r < count; r++) {
        PyObject *t = PyList_GET_ITEM(raw, r);
        Py_ssize_t v[5];
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 5) {
            PyErr_SetString(PyExc_TypeError, "directives must be 5-tuples of offsets");
            goto fail;
        }
        for (int k = 0; k < 5; k++) {
            v[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, k));
            if (v[k] == -1 && PyErr_Occurred())
                goto fail;
        }
        Py_ssize_t start = v[0], ns = v[1], ne = v[2];
        if (start < 0 || start > n || ns < 0 || ne < ns || ne > n) {
            PyErr_SetString(PyExc_ValueError, "a directive's offsets lie outside the data");
            goto fail;
        }
        if (start < n && d[start] == '\n')
            start++;
        const unsigned char *name = d + ns;
        Py_ssize_t len = ne - ns;
        PyObject *own = path; /* the path this directive records (a borrowed reference) */
        int changed = 0;
        if (name_is(name, len, "if") || name_is(name, len, "ifdef") || name_is(name, len, "ifndef")) {
            block[depth] = next_block++;
            branch[depth++] = 0;
            changed = 1;
        } else if (depth > 0 && (name_is(name, len, "elif") || name_is(name, len, "else") ||
                                 name_is(name, len, "elifdef") || name_is(name, len, "elifndef"))) {
            branch[depth - 1]++;
            changed = 1;
        } else if (depth > 0 && name_is(name, len, "endif")) {
            depth--; /* the #endif itself is still inside its block: it records the path before */
            changed = 2;
        }
        if (changed == 1) {
            PyObject *next = branch_path(block, branch, depth);
            if (next == NULL)
                goto fail;
            Py_SETREF(path, next);
            own = path;
        }
        const unsigned char *nl = start < n ? memchr(d + start, '\n', (size_t)(n - start)) : NULL;
        Py_ssize_t end = nl == NULL ? n : nl - d;
        if (end > 0 && d[end - 1] == '\r')
            end--;
        PyObject *rec = dtype->tp_alloc(dtype, 6);
        PyObject *a = PyLong_FromSsize_t(start), *b = PyLong_FromSsize_t(end);
        PyObject *nm = PyBytes_FromStringAndSize((const char *)name, len);
        PyObject *ps = PyLong_FromSsize_t(v[3]), *pe = PyLong_FromSsize_t(v[4]);
        if (rec == NULL || a == NULL || b == NULL || nm == NULL || ps == NULL || pe == NULL) {
            Py_XDECREF(rec); Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(nm); Py_XDECREF(ps); Py_XDECREF(pe);
            goto fail;
        }
        Py_INCREF(own);
        PyTuple_SET_ITEM(rec, 0, a);
        PyTuple_SET_ITEM(rec, 1, b);
        PyTuple_SET_ITEM(rec, 2, nm);
        PyTuple_SET_ITEM(rec, 3, own);
        PyTuple_SET_ITEM(rec, 4, ps);
        PyTuple_SET_ITEM(rec, 5, pe);
        PyList_SET_ITEM(out, r, rec);
        if (changed == 2) {
            PyObject *next = branch_path(block, branch, depth);
            if (next == NULL)
                goto fail;
            Py_SETREF(path, next);
        }
    }
    PyBuffer_Release(&buf);
    PyMem_Free(block);
    PyMem_Free(branch);
    Py_DECREF(path);
    return out;
fail:
    PyBuffer_Release(&buf);
    PyMem_Free(block);
    PyMem_Free(branch);
    Py_XDECREF(path);
    Py_XDECREF(out);
    return NULL;
}

/* line_starts(data) -> [0, offset after each newline, ...] (source.Source.line_starts). */
static PyObject *line_starts(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *d = buf.buf, *p = d, *end = d + buf.len;
    PyObject *out = PyList_New(0);
    if (out == NULL || append_offset(out, 0) < 0)
        goto fail;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        p++;
        if (append_offset(out, p - d) < 0)
            goto fail;
    }
    PyBuffer_Release(&buf);
    return out;
fail:
    PyBuffer_Release(&buf);
    Py_XDECREF(out);
    return NULL;
}

static PyObject *words_found(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    PyObject *capsule;
    int first = 0; /* stop at the first word found (Substrings.any) */
    if (!PyArg_ParseTuple(args, "y*O|p", &buf, &capsule, &first))
        return NULL;
    Words *t = PyCapsule_GetPointer(capsule, "hipport.words");
    const unsigned char *d = buf.buf;
    Py_ssize_t n = buf.len, left = t == NULL ? 0 : t->n;
    /* Every position is tested against the table's own flags: clearing a pair's flag once its
     * words are all found spared few walks, and the 64 KB copy of the flags it took cost more. */
    char *found = t == NULL ? NULL : PyMem_Calloc((size_t)t->n + 1, 1);
    if (found == NULL) {
        PyBuffer_Release(&buf);
        return t == NULL ? NULL : PyErr_NoMemory();
    }
    for (Py_ssize_t i = next_start(t->pairs, d, 0, n); i < n && left > 0; i = next_start(t->pairs, d, i + 1, n)) {
        int node = t->root[d[i]];
        for (Py_ssize_t k = i; node >= 0;) {
            for (int j = t->term[node]; j >= 0; j = t->same[j]) {
                if (!found[j]) {
                    found[j] = 1;
                    left = first ? 0 : left - 1;
                }
            }
            if (left == 0 || ++k >= n)
                break;
            node = trie_step(t, node, d[k]);
        }
    }
    PyBuffer_Release(&buf);
    PyObject *out = PyList_New(0);
    for (Py_ssize_t j = 0; out != NULL && j < t->n; j++) {
        if (found[j] && append_offset(out, j) < 0)
            Py_CLEAR(out);
    }
    PyMem_Free(found);
    return out;
}

static PyObject *words_at(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "y*O", &buf, &capsule))
        return NULL;
    Words *t = PyCapsule_GetPointer(capsule, "hipport.words");
    PyObject *out = t == NULL ? NULL : PyList_New(0);
    const unsigned char *d = buf.buf;
    Py_ssize_t n = buf.len;
    for (Py_ssize_t i = t == NULL ? n : next_start(t->pairs, d, 0, n); out != NULL && i < n;
         i = next_start(t->pairs, d, i + 1, n)) {
        /* the words starting here are the terminals on the walk: the lowest index wins */
        int best = -1;
        for (Py_ssize_t k = i, node = t->root[d[i]]; node >= 0;) {
            int j = t->term[node];
            if (j >= 0 && (best < 0 || j < best))
                best = j;
            if (++k >= n)
                break;
            node = trie_step(t, (int)node, d[k]);
        }
        if (best < 0)
            continue;
        PyObject *span = Py_BuildValue("(nn)", i, i + t->len[best]);
        if (span == NULL || PyList_Append(out, span) < 0)
            Py_CLEAR(out);
        Py_XDECREF(span);
    }
    PyBuffer_Release(&buf);
    return out;
}


/* ------------------------------------------------------------------------------------------
 * Lane math with 32 (rules.warp.LANE_MATH_TRIGGERS, whose patterns are the reference): where
 * the first of them matches, in one pass. Searched one pattern at a time, each started at every
 * `%`, `/`, `&` and `0`, which printf formats, comments and hex tables hold by the thousand. */

static inline int is_hex(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Past any of [\s(] (or [\s(\\] with `splices`) from j. */
static inline Py_ssize_t past_open(const unsigned char *d, Py_ssize_t n, Py_ssize_t j, int splices) {
    while (j < n && (is_py_space(d[j]) || d[j] == '(' || (splices && d[j] == '\\')))
        j++;
    return j;
}

/* Whether the number at j is `dec` (its digits, no digit after) or 0[xX]0*`hex` (no hex digit
 * after; `hex` starts with no 0, so taking every 0 first is what the pattern's 0* comes to). */
static int number_at(const unsigned char *d, Py_ssize_t n, Py_ssize_t j, const char *dec, const char *hex) {
    const char *want = dec;
    int (*digit)(unsigned char) = is_digit;
    if (j + 1 < n && d[j] == '0' && (d[j + 1] == 'x' || d[j + 1] == 'X')) {
        for (j += 2; j < n && d[j] == '0'; j++)
            ;
        want = hex;
        digit = is_hex;
    }
    for (; *want; want++, j++) {
        if (j >= n || d[j] != (unsigned char)*want)
            return 0;
    }
    return j >= n || !digit(d[j]);
}

/* Whether `[uUlL]*[\s)]*&` matches at j. */
static int and_after(const unsigned char *d, Py_ssize_t n, Py_ssize_t j) {
    while (j < n && (d[j] == 'u' || d[j] == 'U' || d[j] == 'l' || d[j] == 'L'))
        j++;
    while (j < n && (is_py_space(d[j]) || d[j] == ')'))
        j++;
    return j < n && d[j] == '&';
}

static Py_ssize_t lane_math_at(const unsigned char *d, Py_ssize_t n) {
    static const unsigned char STARTS[256] = {['%'] = 1, ['/'] = 1, ['&'] = 1, ['3'] = 1, ['0'] = 1, ['>'] = 1};
    for (Py_ssize_t i = 0; i < n; i++) {
        while (!STARTS[d[i]]) /* the bytes no pattern starts with, skipped a table look each */
            if (++i >= n)
                return -1;
        switch (d[i]) {
        case '%':
        case '/': /* [%/][\s(]*(?:32|0[xX]0*20) */
            if (number_at(d, n, past_open(d, n, i + 1, 0), "32", "20"))
                return i;
            break;
        case '&': /* &[\s(]*(?:3[12]|0[xX]0*1[fF]): 31 or 0x1f, else 32 or 0x1F */
            {
                Py_ssize_t j = past_open(d, n, i + 1, 0);
                if (number_at(d, n, j, "31", "1f") || number_at(d, n, j, "32", "1F"))
                    return i;
            }
            break;
        case '3': /* 31[uUlL]*[\s)]*& */
            if (i + 1 < n && d[i + 1] == '1' && and_after(d, n, i + 2))
                return i;
            break;
        case '0': /* 0[xX]0*1[fF][uUlL]*[\s)]*& */
            if (i + 1 < n && (d[i + 1] == 'x' || d[i + 1] == 'X')) {
                Py_ssize_t j = i + 2;
                while (j < n && d[j] == '0')
                    j++;
                if (j + 1 < n && d[j] == '1' && (d[j + 1] == 'f' || d[j + 1] == 'F') && and_after(d, n, j + 2))
                    return i;
            }
            break;
        case '>': /* >>[\s(\\]*(?:5|0[xX]0*5) */
            if (i + 1 < n && d[i + 1] == '>' && number_at(d, n, past_open(d, n, i + 2, 1), "5", "5"))
                return i;
            break;
        }
    }
    return -1;
}

static PyObject *lane_math(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t at = lane_math_at(buf.buf, buf.len);
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(at);
}


/* ------------------------------------------------------------------------------------------
 * #define records (lexer.Lexed.defines, whose _DEFINE pattern is the reference). */

static inline int is_hspace(unsigned char c) { return c == ' ' || c == '\t'; }
static inline int is_bytes_space(unsigned char c) { /* bytes.strip()'s whitespace */
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* `[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?` at i: 1 with the name's span and the
 * match's end (*params_open at the `(`, or -1 when no parameter list follows), else 0. */
static int match_define(const unsigned char *d, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *name_start,
                        Py_ssize_t *name_end, Py_ssize_t *params_open, Py_ssize_t *match_end) {
    while (i < n && is_hspace(d[i]))
        i++;
    if (i >= n || d[i] != '#')
        return 0;
    i++;
    while (i < n && is_hspace(d[i]))
        i++;
    if (n - i < 6 || memcmp(d + i, "define", 6) != 0)
        return 0;
    i += 6;
    if (i >= n || !is_hspace(d[i]))
        return 0;
    while (i < n && is_hspace(d[i]))
        i++;
    if (i >= n || !is_alpha_(d[i]))
        return 0;
    *name_start = i;
    i = word_end_in(d, n, i);
    *name_end = *match_end = i;
    *params_open = -1;
    if (i < n && d[i] == '(') {
        const unsigned char *close = memchr(d + i, ')', (size_t)(n - i));
        if (close != NULL) {
            *params_open = i;
            *match_end = close - d + 1;
        }
    }
    return 1;
}

/* `tuple(p.strip() for p in text.split(b",") if p.strip())` of d[a:b]. */
static PyObject *split_params(const unsigned char *d, Py_ssize_t a, Py_ssize_t b) {
    PyObject *items = PyList_New(0);
    if (items == NULL)
        return NULL;
    Py_ssize_t i = a;
    while (i <= b) {
        Py_ssize_t j = i;
        while (j < b && d[j] != ',')
            j++;
        Py_ssize_t s = i, e = j;
        while (s < e && is_bytes_space(d[s]))
            s++;
        while (e > s && is_bytes_space(d[e - 1]))
            e--;
        if (e > s) {
            PyObject *p = PyBytes_FromStringAndSize((const char *)d + s, e - s);
            if (p == NULL || PyList_Append(items, p) < 0) {
                Py_XDECREF(p);
                Py_DECREF(items);
                return NULL;
            }
            Py_DECREF(p);
        }
        i = j + 1;
    }
    PyObject *out = PyList_AsTuple(items);
    Py_DECREF(items);
    return out;
}

static PyObject *define_records(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    PyObject *directives, *mtype_obj;
    int names_only = 0;
    if (!PyArg_ParseTuple(args, "y*O!O!|p", &buf, &PyList_Type, &directives, &PyType_Type, &mtype_obj, &names_only))
        return NULL;
    PyTypeObject *mtype = (PyTypeObject *)mtype_obj;
    const unsigned char *d = buf.buf;
    Py_ssize_t n = buf.len, count = PyList_GET_SIZE(directives);
    PyObject *out = PyList_New(0);
    if (out == NULL)
        goto fail;
    if (!PyType_IsSubtype(mtype, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "macro_type must be a tuple subclass (a NamedTuple)");
        goto fail;
    }
    for (Py_ssize_t r = 0; r < count; r++) {
        PyObject *rec = PyList_GET_ITEM(directives, r);
        if (!PyTuple_Check(rec) || PyTuple_GET_SIZE(rec) < 3 || !PyBytes_Check(PyTuple_GET_ITEM(rec, 2))) {
            PyErr_SetString(PyExc_TypeError, "directives must be Directive records");
            goto fail;
        }
        PyObject *name = PyTuple_GET_ITEM(rec, 2);
        if (PyBytes_GET_SIZE(name) != 6 || memcmp(PyBytes_AS_STRING(name), "define", 6) != 0)
            continue;
        Py_ssize_t start = PyLong_AsSsize_t(PyTuple_GET_ITEM(rec, 0)), end = PyLong_AsSsize_t(PyTuple_GET_ITEM(rec, 1));
        if ((start == -1 || end == -1) && PyErr_Occurred())
            goto fail;
        if (start < 0 || end < start || end > n) {
            PyErr_SetString(PyExc_ValueError, "a directive's offsets lie outside the data");
            goto fail;
        }
        Py_ssize_t ns, ne, po, me;
        if (!match_define(d, n, start, &ns, &ne, &po, &me))
            continue;
        PyObject *word = PyBytes_FromStringAndSize((const char *)d + ns, ne - ns);
        if (word == NULL)
            goto fail;
        if (names_only) {
            int failed = PyList_Append(out, word) < 0;
            Py_DECREF(word);
            if (failed)
                goto fail;
            continue;
        }
        if (end > 0 && d[end - 1] == '\\')
            end = line_end_from(d, n, start, 1);
        else if (end < n && d[end] == '\r')
            end++;
        PyObject *items[6] = {word, po >= 0 ? split_params(d, po + 1, me - 1) : (Py_INCREF(Py_None), Py_None),
                              PyLong_FromSsize_t(start), PyLong_FromSsize_t(me), PyLong_FromSsize_t(end),
                              PyLong_FromSsize_t(ns)};
        PyObject *m = new_record(mtype, 6, items);
        if (m == NULL)
            goto fail;
        int failed = PyList_Append(out, m) < 0;
        Py_DECREF(m);
        if (failed)
            goto fail;
    }
    PyBuffer_Release(&buf);
    return out;
fail:
    PyBuffer_Release(&buf);
    Py_XDECREF(out);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * CMake (parse/cmake.py's parse, whose regexes are the reference). */

/* `[=*[` at i: the number of `=`, or -1. */
static Py_ssize_t bracket_open(const unsigned char *d, Py_ssize_t n, Py_ssize_t i) {
    if (i >= n || d[i] != '[')
        return -1;
    Py_ssize_t j = i + 1;
    while (j < n && d[j] == '=')
        j++;
    return j < n && d[j] == '[' ? j - i - 1 : -1;
}

/* The end of the bracket text opened by `[`, `eq` `=`s and `[` whose content starts at
 * `from`: just past `]=...=]`, or n when it never closes. *close gets where `]` stands (n). */
static Py_ssize_t bracket_end(const unsigned char *d, Py_ssize_t n, Py_ssize_t from, Py_ssize_t eq,
                              Py_ssize_t *close) {
    for (Py_ssize_t k = from; k + eq + 1 < n; k++) {
        if (d[k] != ']' || d[k + eq + 1] != ']')
            continue;
        Py_ssize_t e = 1;
        while (e <= eq && d[k + e] == '=')
            e++;
        if (e > eq) {
            *close = k;
            return k + eq + 2;
        }
    }
    *close = n;
    return n;
}

/* cmake._comment: a `#` comment at i (bracket or to the line's end), appended; returns its end. */
static Py_ssize_t cmake_comment(const unsigned char *d, Py_ssize_t n, Py_ssize_t i, PyObject *comments) {
    Py_ssize_t eq = bracket_open(d, n, i + 1), end, close;
    if (eq >= 0) {
        end = bracket_end(d, n, i + 1 + eq + 2, eq, &close);
    } else {
        const unsigned char *nl = i < n ? memchr(d + i, '\n', (size_t)(n - i)) : NULL;
        end = nl == NULL ? n : nl - d;
    }
    return append_pair(comments, i, end) < 0 ? -1 : end;
}

static inline int cmake_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
/* Bytes of an unquoted argument without a backslash: `[^\s()#"\\]` (bytes' \s: \f and \v too). */
static inline int cmake_unquoted(unsigned char c) {
    return !(cmake_space(c) || c == '\f' || c == '\v' || c == '(' || c == ')' || c == '#' || c == '"' || c == '\\');
}

static PyObject *make_arg(PyTypeObject *type, const unsigned char *d, Py_ssize_t a, Py_ssize_t b, int quoted,
                          Py_ssize_t ta, Py_ssize_t tb) {
    PyObject *items[4] = {PyLong_FromSsize_t(a), PyLong_FromSsize_t(b), PyBool_FromLong(quoted),
                          PyBytes_FromStringAndSize((const char *)d + ta, tb > ta ? tb - ta : 0)};
    return new_record(type, 4, items);
}

/* cmake._arguments: from just past `(`, the arguments into `args`; returns the offset of the
 * closing `)` (n when there is none), or -1 on a Python error. */
static Py_ssize_t cmake_arguments(const unsigned char *d, Py_ssize_t n, Py_ssize_t i, PyObject *comments,
                                  PyObject *args, PyTypeObject *arg_type) {
    Py_ssize_t depth = 0;
    while (i < n) {
        Py_ssize_t j = i;
        while (j < n && cmake_space(d[j]))
            j++;
        unsigned char c = j < n ? d[j] : 0;
        Py_ssize_t a = j, b, ta, tb;
        int quoted;
        if (j >= n || !(c == '#' || c == '(' || c == ')' || c == '"' || cmake_unquoted(c) ||
                        (c == '\\' && j + 1 < n && d[j + 1] != '\n'))) {
            i = j + 1; /* the end, or a byte no step takes (`\` before a newline, a form feed) */
            continue;
        }
        if (c == '#') {
            if ((i = cmake_comment(d, n, j, comments)) < 0)
                return -1;
            continue;
        }
        if (c == '(') {
            depth++;
            i = j + 1;
            continue;
        }
        if (c == ')') {
            if (depth == 0)
                return j;
            depth--;
            i = j + 1;
            continue;
        }
        Py_ssize_t eq = c == '[' ? bracket_open(d, n, j) : -1;
        if (c == '"') {
            Py_ssize_t k = j + 1;
            while (k < n && d[k] != '"') {
                if (d[k] == '\\') {
                    if (k + 1 >= n)
                        break; /* a backslash as the data's last byte escapes past its end */
                    k += 2;
                } else {
                    k++;
                }
            }
            if (k < n && d[k] != '"')
                k = n + 1;
            quoted = 1;
            ta = j + 1;
            tb = k < n ? k : n;
            b = k + 1 < n ? k + 1 : n;
            i = k + 1;
        } else if (eq >= 0) {
            Py_ssize_t close;
            b = bracket_end(d, n, j + eq + 2, eq, &close);
            quoted = 1;
            ta = j + eq + 2;
            tb = b - eq - 2 > ta ? b - eq - 2 : ta; /* as cmake.py cuts it, closed or not */
            i = b;
        } else { /* unquoted: `(?:[^\s()#"\\]|\\.)+` */
            Py_ssize_t k = j;
            while (k < n) {
                if (cmake_unquoted(d[k]))
                    k++;
                else if (d[k] == '\\' && k + 1 < n && d[k + 1] != '\n')
                    k += 2;
                else
                    break;
            }
            quoted = 0;
            ta = j;
            tb = b = i = k;
        }
        PyObject *arg = make_arg(arg_type, d, a, b, quoted, ta, tb);
        if (arg == NULL || PyList_Append(args, arg) < 0) {
            Py_XDECREF(arg);
            return -1;
        }
        Py_DECREF(arg);
    }
    return n;
}

static PyObject *cmake_parse(PyObject *self, PyObject *pyargs) {
    (void)self;
    Py_buffer buf;
    PyObject *command_type, *arg_type;
    if (!PyArg_ParseTuple(pyargs, "y*O!O!", &buf, &PyType_Type, &command_type, &PyType_Type, &arg_type))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)command_type, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)arg_type, &PyTuple_Type)) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_TypeError, "command_type and arg_type must be tuple subclasses (NamedTuples)");
        return NULL;
    }
    const unsigned char *d = buf.buf;
    Py_ssize_t n = buf.len, i = 0;
    PyObject *commands = PyList_New(0), *comments = PyList_New(0), *args = NULL;
    if (commands == NULL || comments == NULL)
        goto fail;
    while (i < n) {
        unsigned char c = d[i];
        if (c == '#') {
            if ((i = cmake_comment(d, n, i, comments)) < 0)
                goto fail;
            continue;
        }
        if (!is_alpha_(c)) {
            i++;
            continue;
        }
        Py_ssize_t start = i, name_end = word_end_in(d, n, i), j = name_end;
        while (j < n && (d[j] == ' ' || d[j] == '\t'))
            j++;
        if (j >= n || d[j] != '(') {
            i = j;
            continue;
        }
        if ((args = PyList_New(0)) == NULL)
            goto fail;
        Py_ssize_t close = cmake_arguments(d, n, j + 1, comments, args, (PyTypeObject *)arg_type);
        if (close < 0)
            goto fail;
        if (close >= n) {
            Py_CLEAR(args);
            break; /* an unterminated command: nothing after it is a command either */
        }
        Py_ssize_t line_start = start;
        while (line_start > 0 && d[line_start - 1] != '\n')
            line_start--;
        Py_ssize_t ind = line_start;
        while (ind < start && (d[ind] == ' ' || d[ind] == '\t'))
            ind++;
        PyObject *name = PyUnicode_New(name_end - start, 127);
        if (name != NULL) {
            Py_UCS1 *lower = PyUnicode_1BYTE_DATA(name);
            for (Py_ssize_t k = start; k < name_end; k++)
                lower[k - start] = (Py_UCS1)(d[k] >= 'A' && d[k] <= 'Z' ? d[k] + 32 : d[k]);
        }
        PyObject *items[5] = {name, PyLong_FromSsize_t(start), PyLong_FromSsize_t(close), args,
                              PyBytes_FromStringAndSize((const char *)d + line_start, ind == start ? start - line_start : 0)};
        args = NULL;  /* the record's now, or released with it */
        PyObject *cmd = new_record((PyTypeObject *)command_type, 5, items);
        if (cmd == NULL)
            goto fail;
        int failed = PyList_Append(commands, cmd) < 0;
        Py_DECREF(cmd);
        if (failed)
            goto fail;
        i = close + 1;
    }
    PyBuffer_Release(&buf);
    return Py_BuildValue("(NN)", commands, comments);
fail:
    PyBuffer_Release(&buf);
    Py_XDECREF(args);
    Py_XDECREF(commands);
    Py_XDECREF(comments);
    return NULL;
}

/* ------------------------------------------------------------------ regions
 * Regions(data, comments, strings, directives): Lexed's questions about where an offset
 * sits, asked tens of thousands of times a run by the rules and the renamer, answered from
 * arrays by bisection in C. Each method is step for step its Python namesake on Lexed, which
 * stays the reference (and the fallback), and binds in its place on the scanner's Lexed:
 *   previous_code(offset), next_code(offset), directive_at(offset), in_directive(offset),
 *   in_comment_or_string(offset), in_plain_code(offset), code_before(offset),
 *   match_back(close[, opener, closer]); bind(namespace) puts them in a dict.
 * comments and strings are lists of (start, end); directives Directive records, whose line
 * ends (continuations followed, as Lexed.directive_ends) are worked out here. */
typedef struct {
    PyObject_HEAD
    PyObject *data;          /* the bytes (kept alive: d points into them) */
    const unsigned char *d;
    Py_ssize_t n;
    Py_ssize_t *cs, *ce, nc; /* comments, in order */
    Py_ssize_t *ks, *ke, nk; /* comments and literals, sorted by (start, end) */
    Py_ssize_t *ds, *de, nd; /* directive lines: start, end */
    Py_ssize_t *block;       /* the one allocation behind the arrays */
} Regions;

typedef struct {
    Py_ssize_t s, e;
} Span;

static int span_order(const void *a, const void *b) {
    const Span *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return x->e < y->e ? -1 : x->e > y->e;
}

/* The first index whose value is > x (bisect_right), or >= x (bisect_left). */
static Py_ssize_t after(const Py_ssize_t *a, Py_ssize_t n, Py_ssize_t x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (x < a[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static Py_ssize_t from(const Py_ssize_t *a, Py_ssize_t n, Py_ssize_t x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first two items of a (start, end) tuple or a record, as offsets; -1 with an error set. */
static int record_offsets(PyObject *rec, Py_ssize_t *a, Py_ssize_t *b) {
    if (!PyTuple_Check(rec) || PyTuple_GET_SIZE(rec) < 2) {
        PyErr_SetString(PyExc_TypeError, "Regions: expected (start, end, ...) tuples");
        return -1;
    }
    *a = PyLong_AsSsize_t(PyTuple_GET_ITEM(rec, 0));
    *b = PyLong_AsSsize_t(PyTuple_GET_ITEM(rec, 1));
    return (*a == -1 || *b == -1) && PyErr_Occurred() ? -1 : 0;
}

static void regions_dealloc(Regions *r) {
    Py_XDECREF(r->data);
    PyMem_Free(r->block);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *regions_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *data, *comments, *strings, *directives;
    static char *kwlist[] = {"data", "comments", "strings", "directives", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!O!", kwlist, &PyBytes_Type, &data, &PyList_Type, &comments,
                                     &PyList_Type, &strings, &PyList_Type, &directives))
        return NULL;
    Py_ssize_t nc = PyList_GET_SIZE(comments), ns = PyList_GET_SIZE(strings), nd = PyList_GET_SIZE(directives);
    Regions *r = (Regions *)type->tp_alloc(type, 0);
    if (r == NULL)
        return NULL;
    Py_INCREF(data);
    r->data = data;
    r->d = (const unsigned char *)PyBytes_AS_STRING(data);
    r->n = PyBytes_GET_SIZE(data);
    Py_ssize_t nk = nc + ns;
    r->block = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(2 * nc + 2 * nk + 2 * nd + 1));
    Span *spans = PyMem_Malloc(sizeof(Span) * (size_t)(nk + 1));
    if (r->block == NULL || spans == NULL) {
        PyMem_Free(spans);
        Py_DECREF(r);
        return PyErr_NoMemory();
    }
    r->cs = r->block;
    r->ce = r->cs + nc;
    r->ks = r->ce + nc;
    r->ke = r->ks + nk;
    r->ds = r->ke + nk;
    r->de = r->ds + nd;
    r->nc = nc;
    r->nk = nk;
    r->nd = nd;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *item = i < nc ? PyList_GET_ITEM(comments, i) : PyList_GET_ITEM(strings, i - nc);
        if (record_offsets(item, &spans[i].s, &spans[i].e) < 0)
            goto fail;
        if (i < nc) {
            r->cs[i] = spans[i].s;
            r->ce[i] = spans[i].e;
        }
    }
    /* sorted(comments + strings): the scanner makes each list in order, so a merge does */
    Py_ssize_t split = nc; /* spans[:split] and spans[split:] are each in order */
    for (Py_ssize_t i = 1; i < nk && split < nk; i++) {
        if (i != nc && span_order(&spans[i - 1], &spans[i]) > 0) {
            qsort(spans, (size_t)nk, sizeof(Span), span_order);
            split = nk;
        }
    }
    for (Py_ssize_t i = 0, a = 0, b = split; i < nk; i++) {
        const Span *next = b == nk || (a < split && span_order(&spans[a], &spans[b]) <= 0) ? &spans[a++] : &spans[b++];
        r->ks[i] = next->s;
        r->ke[i] = next->e;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        Py_ssize_t start, end;
        if (record_offsets(PyList_GET_ITEM(directives, i), &start, &end) < 0)
            goto fail;
        r->ds[i] = start;
        r->de[i] = end >= 1 && end <= r->n && r->d[end - 1] == '\\' ? line_end_from(r->d, r->n, start, 0) : end;
    }
    PyMem_Free(spans);
    return (PyObject *)r;
fail:
    PyMem_Free(spans);
    Py_DECREF(r);
    return NULL;
}

static int is_gap(unsigned char c) { /* what previous_code and next_code step over */
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\';
}

static int offset_arg(PyObject *arg, Py_ssize_t *offset) {
    *offset = PyLong_AsSsize_t(arg);
    return *offset == -1 && PyErr_Occurred() ? -1 : 0;
}

/* previous_code for an offset in 0..n (the callers check). */
static Py_ssize_t code_end_before(const Regions *r, Py_ssize_t offset) {
    for (;;) {
        while (offset > 0 && is_gap(r->d[offset - 1]))
            offset--;
        Py_ssize_t i = after(r->cs, r->nc, offset - 1) - 1;
        if (offset == 0 || i < 0 || r->ce[i] < offset)
            return offset;
        offset = r->cs[i];
    }
}

static int offset_in_data(const Regions *r, PyObject *arg, Py_ssize_t *offset) {
    if (offset_arg(arg, offset) < 0)
        return -1;
    if (*offset > r->n) { /* where Python's data[offset - 1] raises */
        PyErr_SetString(PyExc_IndexError, "offset past the data");
        return -1;
    }
    return 0;
}

static PyObject *regions_previous_code(Regions *r, PyObject *arg) {
    Py_ssize_t offset;
    return offset_in_data(r, arg, &offset) < 0 ? NULL : PyLong_FromSsize_t(code_end_before(r, offset));
}

static PyObject *regions_next_code(Regions *r, PyObject *arg) {
    Py_ssize_t offset;
    if (offset_arg(arg, &offset) < 0)
        return NULL;
    offset = offset < 0 ? 0 : offset > r->n ? r->n : offset; /* as a regex match's pos */
    for (;;) {
        while (offset < r->n && is_gap(r->d[offset]))
            offset++;
        Py_ssize_t i = from(r->cs, r->nc, offset);
        if (i == r->nc || r->cs[i] != offset)
            return PyLong_FromSsize_t(offset);
        offset = r->ce[i];
    }
}

static Py_ssize_t directive_index(const Regions *r, Py_ssize_t offset) {
    Py_ssize_t i = after(r->ds, r->nd, offset) - 1;
    return i >= 0 && offset <= r->de[i] ? i : -1;
}

static int skipped(const Regions *r, Py_ssize_t offset) {
    Py_ssize_t i = after(r->ks, r->nk, offset) - 1;
    return i >= 0 && offset < r->ke[i];
}

static PyObject *regions_directive_at(Regions *r, PyObject *arg) {
    Py_ssize_t offset;
    return offset_arg(arg, &offset) < 0 ? NULL : PyLong_FromSsize_t(directive_index(r, offset));
}

static PyObject *regions_in_directive(Regions *r, PyObject *arg) {
    Py_ssize_t offset;
    return offset_arg(arg, &offset) < 0 ? NULL : PyBool_FromLong(directive_index(r, offset) >= 0);
}

static PyObject *regions_in_comment_or_string(Regions *r, PyObject *arg) {
    Py_ssize_t offset;
    return offset_arg(arg, &offset) < 0 ? NULL : PyBool_FromLong(skipped(r, offset));
}

static PyObject *regions_code_before(Regions *r, PyObject *arg) {
    Py_ssize_t offset, i;
    if (offset_in_data(r, arg, &offset) < 0)
        return NULL;
    Py_ssize_t end = code_end_before(r, offset);
    while (end > 0 && (i = directive_index(r, end - 1)) >= 0)
        end = code_end_before(r, r->ds[i] < 0 ? 0 : r->ds[i] > r->n ? r->n : r->ds[i]);
    return PyLong_FromSsize_t(end);
}

static int one_byte(PyObject *o, unsigned char *c) {
    if (!PyBytes_Check(o) || PyBytes_GET_SIZE(o) != 1) {
        PyErr_SetString(PyExc_ValueError, "match_back: opener and closer are single bytes");
        return -1;
    }
    *c = (unsigned char)PyBytes_AS_STRING(o)[0];
    return 0;
}

static PyObject *regions_match_back(Regions *r, PyObject *const *args, Py_ssize_t nargs) {
    unsigned char open = '(', close_byte = ')';
    Py_ssize_t close;
    if (nargs < 1 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "match_back(close, opener=b'(', closer=b')')");
        return NULL;
    }
    if (offset_arg(args[0], &close) < 0 || (nargs > 1 && one_byte(args[1], &open) < 0)
        || (nargs > 2 && one_byte(args[2], &close_byte) < 0))
        return NULL;
    /* data.rfind(...) between floor and at, as Python bounds a slice */
    Py_ssize_t floor = close - 4096 > 0 ? close - 4096 : 0, at = close + 1, depth = 0;
    if (at < 0)
        at = at + r->n < 0 ? 0 : at + r->n;
    if (at > r->n)
        at = r->n;
    while (--at >= floor) {
        unsigned char c = r->d[at];
        if ((c != open && c != close_byte) || skipped(r, at))
            continue;
        depth += c == close_byte ? 1 : -1;
        if (depth == 0)
            return PyLong_FromSsize_t(at);
    }
    Py_RETURN_NONE;
}

static PyObject *regions_in_plain_code(Regions *r, PyObject *arg) {
    Py_ssize_t offset;
    if (offset_arg(arg, &offset) < 0)
        return NULL;
    return PyBool_FromLong(!skipped(r, offset) && directive_index(r, offset) < 0);
}

#define REGION_ANSWERS 8 /* the methods that answer for Lexed: the table's first entries */
static PyObject *regions_bind(Regions *r, PyObject *namespace);

static PyMethodDef regions_methods[] = {
    {"previous_code", (PyCFunction)regions_previous_code, METH_O, "Lexed.previous_code"},
    {"next_code", (PyCFunction)regions_next_code, METH_O, "Lexed.next_code"},
    {"directive_at", (PyCFunction)regions_directive_at, METH_O, "Lexed.directive_at"},
    {"in_directive", (PyCFunction)regions_in_directive, METH_O, "Lexed.in_directive"},
    {"in_comment_or_string", (PyCFunction)regions_in_comment_or_string, METH_O, "Lexed.in_comment_or_string"},
    {"in_plain_code", (PyCFunction)regions_in_plain_code, METH_O, "Lexed.in_plain_code"},
    {"code_before", (PyCFunction)regions_code_before, METH_O, "Lexed.code_before"},
    {"match_back", (PyCFunction)(void (*)(void))regions_match_back, METH_FASTCALL, "Lexed.match_back"},
    {"bind", (PyCFunction)regions_bind, METH_O,
     "bind(namespace): each method above into the dict `namespace` (a Lexed's __dict__), by its name"},
    {NULL, NULL, 0, NULL},
};
static PyObject *REGION_NAMES[REGION_ANSWERS]; /* their names, interned at import */

static PyObject *regions_bind(Regions *r, PyObject *namespace) {
    if (!PyDict_Check(namespace)) {
        PyErr_SetString(PyExc_TypeError, "bind: expected a dict");
        return NULL;
    }
    for (int k = 0; k < REGION_ANSWERS; k++) {
        PyObject *f = PyCFunction_NewEx(&regions_methods[k], (PyObject *)r, NULL);
        if (f == NULL || PyDict_SetItem(namespace, REGION_NAMES[k], f) < 0) {
            Py_XDECREF(f);
            return NULL;
        }
        Py_DECREF(f);
    }
    Py_RETURN_NONE;
}

static PyTypeObject RegionsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hipport.parse._scan.Regions",
    .tp_basicsize = sizeof(Regions),
    .tp_dealloc = (destructor)regions_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Regions(data, comments, strings, directives): where an offset sits (see _scan.c)",
    .tp_methods = regions_methods,
    .tp_new = regions_new,
};

/* brace_pairs(data, offsets) -> (opens, closes, parents, balanced, innermost): parse.braces'
 * pairing of the code's `{` and `}` offsets (pair_braces, the reference), and Braces.innermost
 * over those pairs, as a method of an object that keeps them as arrays (Braces binds it: the
 * rules ask tens of thousands of times a run). An unclosed `{` closes at the data's end. */
typedef struct {
    PyObject_HEAD
    Py_ssize_t *opens, *closes, *parents, count;
} Pairs;

static void pairs_dealloc(Pairs *p) {
    PyMem_Free(p->opens);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyObject *pairs_innermost(Pairs *p, PyObject *arg) {
    Py_ssize_t offset;
    if (offset_arg(arg, &offset) < 0)
        return NULL;
    Py_ssize_t i = after(p->opens, p->count, offset) - 1;
    while (i >= 0 && p->closes[i] < offset)
        i = p->parents[i];
    return PyLong_FromSsize_t(i);
}

static PyMethodDef pairs_methods[] = {
    {"innermost", (PyCFunction)pairs_innermost, METH_O, "parse.braces.Braces.innermost"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PairsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hipport.parse._scan.Pairs",
    .tp_basicsize = sizeof(Pairs),
    .tp_dealloc = (destructor)pairs_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "brace pairs as arrays (made by brace_pairs)",
    .tp_methods = pairs_methods,
};

static PyObject *brace_pairs(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *data, *offsets;
    if (!PyArg_ParseTuple(args, "O!O!", &PyBytes_Type, &data, &PyList_Type, &offsets))
        return NULL;
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data), m = PyList_GET_SIZE(offsets);
    Pairs *pairs = PyObject_New(Pairs, &PairsType);
    if (pairs == NULL)
        return NULL;
    pairs->count = 0;
    pairs->opens = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(3 * m + 1));
    Py_ssize_t *stack = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(m + 1)); /* the open pairs */
    if (pairs->opens == NULL || stack == NULL) {
        PyMem_Free(stack);
        Py_DECREF(pairs);
        return PyErr_NoMemory();
    }
    Py_ssize_t *opens = pairs->opens, *closes = opens + m, *parents = closes + m;
    pairs->closes = closes;
    pairs->parents = parents;
    Py_ssize_t count = 0, depth = 0;
    int balanced = 1;
    PyObject *out = NULL, *lists[3] = {NULL, NULL, NULL};
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t at = PyLong_AsSsize_t(PyList_GET_ITEM(offsets, k));
        if (at == -1 && PyErr_Occurred())
            goto done;
        if (at < 0 || at >= n) {
            PyErr_SetString(PyExc_IndexError, "brace_pairs: offset outside the data");
            goto done;
        }
        if (d[at] == '{') {
            parents[count] = depth ? stack[depth - 1] : -1;
            stack[depth++] = count;
            opens[count] = at;
            closes[count++] = n;
        } else if (depth) {
            closes[stack[--depth]] = at;
        } else {
            balanced = 0;
            break;
        }
    }
    if (depth)
        balanced = 0;
    pairs->count = count;
    const Py_ssize_t *columns[3] = {opens, closes, parents};
    for (int c = 0; c < 3; c++) {
        if ((lists[c] = PyList_New(count)) == NULL)
            goto done;
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *o = PyLong_FromSsize_t(columns[c][i]);
            if (o == NULL)
                goto done;
            PyList_SET_ITEM(lists[c], i, o);
        }
    }
    PyObject *innermost = PyCFunction_NewEx(&pairs_methods[0], (PyObject *)pairs, NULL);
    if (innermost == NULL)
        goto done;
    out = Py_BuildValue("(NNNON)", lists[0], lists[1], lists[2], balanced ? Py_True : Py_False, innermost);
    lists[0] = lists[1] = lists[2] = NULL;
done:
    for (int c = 0; c < 3; c++)
        Py_XDECREF(lists[c]);
    PyMem_Free(stack);
    Py_DECREF(pairs); /* the bound method keeps it */
    return out;
}

/* word_before(data, end, span) -> (start, word): parse.braces.python_word_before in C, with
 * Python's slice bounds for data[max(0, end - span):end]. */
static PyObject *word_before(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Py_ssize_t end, span = 64;
    if (nargs < 2 || nargs > 3 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "word_before(data: bytes, end, span=64)");
        return NULL;
    }
    if (offset_arg(args[1], &end) < 0 || (nargs > 2 && offset_arg(args[2], &span) < 0))
        return NULL;
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]), start = end - span > 0 ? end - span : 0;
    Py_ssize_t lo = start > n ? n : start, hi = end < 0 ? (end + n < 0 ? 0 : end + n) : (end > n ? n : end);
    if (hi < lo)
        hi = lo;
    while (hi > lo && (d[hi - 1] == ' ' || d[hi - 1] == '\t' || d[hi - 1] == '\r' || d[hi - 1] == '\n'))
        hi--;
    Py_ssize_t w = hi;
    while (w > lo && (CLASS[d[w - 1]] & C_WORD))
        w--;
    return Py_BuildValue("(ny#)", start + (hi - lo) - (hi - w), (const char *)d + w, hi - w);
}

/* Every offset where `word` starts in `data`, overlaps included; with `whole`, only where no
 * word byte stands just before or just after it (patterns.starts_of and
 * patterns.whole_word_starts, the references). An empty word starts at every offset 0..n. */
static PyObject *starts(PyObject *const *args, Py_ssize_t nargs, int whole, const char *usage) {
    if (nargs != 2 || !PyBytes_Check(args[0]) || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    const unsigned char *w = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]), m = PyBytes_GET_SIZE(args[1]), last = n - m;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t at = 0; at <= last; at++) {
        if (m > 0) {
            const unsigned char *hit = memchr(d + at, w[0], (size_t)(last - at + 1));
            if (hit == NULL)
                break;
            at = hit - d;
            if (memcmp(hit + 1, w + 1, (size_t)(m - 1)) != 0)
                continue;
        }
        if (whole && ((at > 0 && is_word(d[at - 1])) || (at < last && is_word(d[at + m]))))
            continue;
        if (append_offset(out, at) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *starts_of(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return starts(args, nargs, 0, "starts_of(data: bytes, literal: bytes)");
}

static PyObject *whole_word_starts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return starts(args, nargs, 1, "whole_word_starts(data: bytes, word: bytes)");
}

/* word_index(data) -> {word: [start, ...]} for every run of word bytes (what a bytes pattern's
 * `\w+` matches), starts in order: patterns.python_word_index in C. */
static PyObject *word_index(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "word_index(data: bytes)");
        return NULL;
    }
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    PyObject *index = PyDict_New();
    if (index == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n;) {
        if (!is_word(d[i])) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < n && is_word(d[i]))
            i++;
        PyObject *word = PyBytes_FromStringAndSize((const char *)d + start, i - start);
        if (word == NULL)
            goto fail;
        PyObject *at = PyDict_GetItemWithError(index, word); /* borrowed */
        if (at == NULL) {
            if (PyErr_Occurred() || (at = PyList_New(0)) == NULL || PyDict_SetItem(index, word, at) < 0) {
                Py_XDECREF(at);
                Py_DECREF(word);
                goto fail;
            }
            Py_DECREF(at); /* the dict holds it */
        }
        Py_DECREF(word);
        if (append_offset(at, start) < 0)
            goto fail;
    }
    return index;
fail:
    Py_DECREF(index);
    return NULL;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "scan(data, prefixes_table, token_type) -> (ids, comments, strings, directives, braces, words, contexts)"},
    {"line_starts", line_starts, METH_O, "line_starts(data) -> offsets where each line starts"},
    {"directive_records", directive_records, METH_VARARGS,
     "directive_records(data, directives, directive_type) -> the Directive records of scan()'s tuples"},
    {"words_table", words_table, METH_O, "words_table(words) -> table for words_found"},
    {"words_found", words_found, METH_VARARGS, "words_found(data, table[, first]) -> indices of the words in data"},
    {"words_at", words_at, METH_VARARGS, "words_at(data, table) -> [(start, end)] of the words in data"},
    {"define_records", define_records, METH_VARARGS,
     "define_records(data, directives, macro_type[, names_only]) -> Lexed.defines' records (or names)"},
    {"lane_math", lane_math, METH_O, "lane_math(data) -> where the first lane-math trigger matches, or -1"},
    {"cmake_parse", cmake_parse, METH_VARARGS,
     "cmake_parse(data, command_type, arg_type) -> (commands, comments), as parse.cmake.parse"},
    {"word_before", (PyCFunction)(void (*)(void))word_before, METH_FASTCALL,
     "word_before(data, end, span=64) -> (start, word), as parse.braces.python_word_before"},
    {"starts_of", (PyCFunction)(void (*)(void))starts_of, METH_FASTCALL,
     "starts_of(data, literal) -> every offset where literal starts, as patterns.starts_of"},
    {"whole_word_starts", (PyCFunction)(void (*)(void))whole_word_starts, METH_FASTCALL,
     "whole_word_starts(data, word) -> where word stands whole, as patterns.whole_word_starts"},
    {"word_index", word_index, METH_O, "word_index(data) -> {word: [start, ...]}, as patterns.python_word_index"},
    {"brace_pairs", brace_pairs, METH_VARARGS,
     "brace_pairs(data, offsets) -> (opens, closes, parents, balanced, innermost), as parse.braces"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__scan(void) {
    fill_classes();
    MEMBER = PyUnicode_InternFromString("member");
    QUALIFIED = PyUnicode_InternFromString("qualified");
    PASTED = PyUnicode_InternFromString("pasted");
    PLAIN = PyUnicode_InternFromString("");
    if (!MEMBER || !QUALIFIED || !PASTED || !PLAIN || PyType_Ready(&RegionsType) < 0
        || PyType_Ready(&PairsType) < 0)
        return NULL;
    for (int k = 0; k < REGION_ANSWERS; k++) {
        if ((REGION_NAMES[k] = PyUnicode_InternFromString(regions_methods[k].ml_name)) == NULL)
            return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&RegionsType);
    if (PyModule_AddObject(m, "Regions", (PyObject *)&RegionsType) < 0) {
        Py_DECREF(&RegionsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
