import { excludedPathReason, excludedReason } from '../../lib/archive/exclusions';

describe('archive exclusions', () => {
  it.each([
    ['.git', 'version-control metadata'],
    ['__pycache__', 'Python bytecode cache'],
    ['.DS_Store', 'macOS Finder metadata'],
    ['.ipynb_checkpoints', 'Jupyter checkpoints'],
    ['model.py~', 'editor backup or swap file'],
    ['.model.py.swp', 'editor backup or swap file'],
    ['.model.py.swo', 'editor backup or swap file'],
    ['.#model.py', 'Emacs lock or auto-save file'],
    ['#model.py#', 'Emacs lock or auto-save file'],
  ])('leaves out %s (%s)', (name, reason) => {
    expect(excludedReason(name)).toContain(reason);
  });

  it.each(['config.pbtxt', 'model.py', '1', 'vocab.bak', 'model.orig', '#', 'git', '.gitignore', 'pycache'])(
    'keeps %s',
    (name) => {
      expect(excludedReason(name)).toBeUndefined();
    },
  );

  it('judges a path by every component', () => {
    expect(excludedPathReason('bert/1/__pycache__/model.cpython-311.pyc')).toContain('Python bytecode cache');
    expect(excludedPathReason('bert/1/model.py')).toBeUndefined();
  });
});
