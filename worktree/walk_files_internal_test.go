package worktree

// Walks as tests look at them: every file in one list.

// walkFiles is Walk's walk: the files it calls fn with, in order, and the
// skips.
func walkFiles(root string, opts *WalkOptions) ([]File, []Skip, error) {
	tree, err := walkTree(root, opts)
	if err != nil {
		return nil, nil, err
	}
	return tree.list(), tree.skips, nil
}

// list returns the files in one list.
func (t *walked) list() []File {
	if t.files != nil || t.w == nil {
		return t.files
	}
	return t.w.inOrder(t.rel)
}
