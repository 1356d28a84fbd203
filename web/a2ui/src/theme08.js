// The theme the v0.8 components of @a2ui/lit require (Types.Theme: class maps for every
// component and element, classes for markdown tags). The classes are @a2ui/web_core's
// structural styles, which every component adopts; their colours read the palette
// variables --p-0 … --p-100 (primary) and --n-0 … --n-100 (neutral) that the page
// defines (style.css, .a2ui-v08). Text takes the colour of what holds it (the page, a
// button). No inline styles: additionalStyles is left out.

const c = (...names) => Object.fromEntries(names.map((n) => [n, true]));

const heading = (size) => c('typography-f-sf', 'typography-w-500', 'layout-m-0', `typography-sz-${size}`);
const field = {
  container: c('layout-dsp-flexvert', 'layout-g-1', 'layout-w-100'),
  label: c('typography-f-s', 'typography-sz-ls', 'typography-w-500', 'color-c-n30'),
  element: c('layout-pt-2', 'layout-pb-2', 'layout-pl-3', 'layout-pr-3', 'border-br-2', 'border-bw-1', 'border-bs-s',
    'color-bc-n60', 'color-bgc-n100', 'color-c-n10', 'typography-f-s', 'typography-sz-bm'),
};

/** @type {import('@a2ui/web_core/types/types').Theme} */
export const theme = {
  components: {
    AudioPlayer: c('layout-w-100'),
    Button: c('layout-pt-2', 'layout-pb-2', 'layout-pl-5', 'layout-pr-5', 'border-br-12', 'border-bw-0',
      'color-bgc-p40', 'color-c-n100', 'behavior-ho-80', 'typography-w-500'),
    Card: c('border-br-3', 'border-bw-1', 'border-bs-s', 'color-bc-n90', 'color-bgc-n100', 'layout-p-4'),
    Column: c('layout-g-3'),
    CheckBox: { ...field, element: c('layout-m-0') },
    DateTimeInput: field,
    Divider: c('color-bc-n90'),
    Image: {
      all: c('border-br-2', 'layout-w-100'),
      icon: c('layout-w-10'),
      avatar: c('border-br-12', 'layout-w-20'),
      smallFeature: c('layout-w-30'),
      mediumFeature: c('layout-w-60'),
      largeFeature: c('layout-w-100'),
      header: c('layout-w-100'),
    },
    Icon: c('color-c-p40'),
    List: c('layout-g-2'),
    Modal: {
      backdrop: c('color-bbgc-n10_50'),
      element: c('border-br-3', 'border-bw-0', 'layout-p-4', 'color-bgc-n100'),
    },
    MultipleChoice: field,
    Row: c('layout-g-3', 'layout-al-c'),
    Slider: { ...field, element: c('layout-w-100') },
    Tabs: {
      container: c('layout-dsp-flexvert', 'layout-g-2'),
      element: c('layout-dsp-flexhor', 'layout-g-2'),
      controls: {
        all: c('layout-pt-1', 'layout-pb-1', 'layout-pl-3', 'layout-pr-3', 'border-br-12', 'border-bw-1', 'border-bs-s', 'color-bc-n80'),
        selected: c('color-bgc-p90', 'color-bc-p40'),
      },
    },
    Text: {
      all: c('layout-w-100', 'typography-f-s'),
      h1: heading('hs'),
      h2: heading('tl'),
      h3: heading('tm'),
      h4: heading('ts'),
      h5: heading('ls'),
      caption: c('typography-sz-bs', 'color-c-n40'),
      body: c('typography-sz-bm'),
    },
    TextField: field,
    Video: c('layout-w-100', 'border-br-2'),
  },
  elements: {
    a: c('color-c-p40'),
    audio: c('layout-w-100'),
    body: c('typography-f-s', 'typography-sz-bm'),
    button: c('typography-f-s'),
    h1: heading('hs'),
    h2: heading('tl'),
    h3: heading('tm'),
    h4: heading('ts'),
    h5: heading('ls'),
    iframe: c('layout-w-100'),
    input: c('typography-f-s', 'typography-sz-bm'),
    p: c('layout-m-0'),
    pre: c('typography-f-c'),
    textarea: c('typography-f-s'),
    video: c('layout-w-100'),
  },
  markdown: {
    p: ['layout-m-0', 'typography-sz-bm'],
    h1: ['layout-m-0', 'typography-w-500', 'typography-sz-hs'],
    h2: ['layout-m-0', 'typography-w-500', 'typography-sz-tl'],
    h3: ['layout-m-0', 'typography-w-500', 'typography-sz-tm'],
    h4: ['layout-m-0', 'typography-w-500', 'typography-sz-ts'],
    h5: ['layout-m-0', 'typography-w-500', 'typography-sz-ls'],
    ul: ['layout-m-0'],
    ol: ['layout-m-0'],
    li: [],
    a: ['color-c-p40'],
    strong: [],
    em: [],
    pre: ['typography-f-c', 'typography-ws-p'], // fenced code (see markdown.js); pre-line wraps
  },
};
