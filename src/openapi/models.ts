/**
 * The platform's data models (PLATFORM.md and the platform's interface
 * specification) as JSON Schema, for the OpenAPI document's success answers. The
 * platform adds fields freely, so objects stay open; types are what the
 * specification states. Request schemas are not here: they come from the
 * operation table's zod schemas.
 */
type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const num: Schema = { type: 'number' };
const bool: Schema = { type: 'boolean' };
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required } : {}),
});
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
/**
 * Any JSON value. Every schema here names its `type` (a list where several fit):
 * JSON Schema does not need it, but the API reference page (Scalar) warns of each
 * schema without one.
 */
export const anyValue: Schema = {
  type: ['object', 'array', 'string', 'number', 'boolean', 'null'],
  description: 'Any JSON value.',
};

/** The paged list wrapper of every list operation, for items of `item`. */
export const paged = (item: Schema): Schema =>
  obj({ page_num: int, page_size: int, total: int, total_page: int, data: arrayOf(item) }, [
    'page_num',
    'page_size',
    'total',
    'total_page',
    'data',
  ]);

const model = obj({
  system_model_id: str,
  user_id: str,
  provider: str,
  model_type: str,
  base_url: str,
  api_key: { type: 'string', description: 'Always empty in team answers.' },
  icon_url: str,
  created_at: str,
  updated_at: str,
});

const uuid: Schema = { type: 'string', format: 'uuid' };
/** The fields an agent and a team (both components) start with, after their id. */
const componentHead = { user_id: str, avatar: str, name: str, description: str };

const agent = obj(
  {
    agent_id: uuid,
    ...componentHead,
    system_message: str,
    component_type: str,
    agent_type: str,
    model: ref('Model'),
    parameters: obj({ system_prompt_role: str, system_prompt_task_skill: str, temperature: num }),
    created_at: str,
    updated_at: str,
  },
  ['agent_id', 'name'],
);

const team = obj(
  {
    team_id: uuid,
    ...componentHead,
    component_type: str,
    team_type: str,
    agents: arrayOf(ref('Agent')),
    termination: str,
    model: ref('Model'),
    parameters: obj({
      system_prompt_role: str,
      system_prompt_task_skill: str,
      max_turns: int,
      temperature: num,
    }),
    created_at: str,
    updated_at: str,
    deleted_at: int,
  },
  ['team_id', 'name'],
);

const message = obj(
  {
    message_id: str,
    source: str,
    source_type: str,
    source_component: str,
    content: str,
    message: anyValue,
    type: str,
    created_at: str,
    attachments: arrayOf(anyValue),
    session_round: int,
  },
  ['message_id'],
);

const page = obj({
  index: int,
  url: str,
  status: str,
  video_url: str,
  ws_debugger_url: str,
  front_debugger_url: str,
  page_id: str,
  debugger_host: str,
});

const browser = obj(
  {
    browser_id: str,
    user_id: str,
    session_id: str,
    status: str,
    width: int,
    height: int,
    ws_endpoint: str,
    solve_captcha: bool,
    timezone: str,
    user_agent: str,
    duration_seconds: int,
    created_at: str,
    pages: arrayOf(ref('BrowserPage')),
  },
  ['browser_id'],
);

const category = obj({ id: int, zh: str, en: str, en_desc: str, level: int }, ['id']);

/** The current client's dashboard (PLATFORM.md, "What the platform's current client does"). */
const product = obj(
  {
    product_id: str,
    product_name: str,
    status: { type: 'string', description: '`pending` or `completed`.' },
  },
  ['product_id', 'status'],
);

const report = obj(
  {
    report_id: str,
    product_name: str,
    target_description: str,
    keywords: arrayOf(str),
    user_personas: arrayOf(anyValue),
    user_profiles: arrayOf(anyValue),
    competitors: arrayOf(anyValue),
    recommended_campaigns: arrayOf(obj({ name: str, description: str })),
    related_links: arrayOf(str),
    related_industries: arrayOf(obj({ level1: obj({ id: int }), level2: arrayOf(int) })),
  },
  ['report_id'],
);

/** Reusable schemas, by component name. */
export const MODELS: Record<string, Schema> = {
  Model: model,
  Agent: agent,
  Team: team,
  ApiKey: obj(
    {
      id: int,
      name: str,
      api_key: {
        type: 'string',
        description: 'Masked (`sk-…c0de`) unless the token has apikeys:admin.',
      },
      created_at: str,
      last_used_at: str,
    },
    ['id', 'name'],
  ),
  CallRecord: obj({
    session_id: str,
    api_key_name: str,
    browser_id: str,
    platform: str,
    duration: int,
    auth_captcha: obj({ has_used: bool, used_count: int }),
    ip_proxy_bandwidth: num,
    cost: obj({
      total_credit: num,
      server_traffic: num,
      token: num,
      browser: num,
      auto_captcha: num,
      ip_proxy_bandwidth: num,
    }),
    status: str,
    created_at: str,
  }),
  FilterValues: obj({
    api_key_names: arrayOf(str),
    platforms: arrayOf(str),
    states: {
      description: 'The allowed `status` values of /user/call/lists.',
      type: ['array', 'string'],
      oneOf: [arrayOf(str), str],
    },
  }),
  Session: obj(
    {
      session_id: str,
      status: str,
      browser_id: str,
      team_id: str,
      intent_id: str,
      name: str,
      task: arrayOf(obj({ role: str, content: str, metadata: { type: 'object' } })),
      task_result: { type: 'object' },
      messages: arrayOf(ref('Message')),
      duration: int,
      error_message: str,
      attachments: arrayOf(anyValue),
      platform: str,
      visibility: str,
      created_at: str,
      updated_at: str,
    },
    ['session_id'],
  ),
  Message: message,
  MessageList: obj(
    { messages: arrayOf(ref('Message')), total_count: int, has_next: bool, has_prev: bool },
    ['messages'],
  ),
  Browser: browser,
  BrowserPage: page,
  Empty: { type: 'object' },
  Product: product,
  ProductInfo: {
    type: 'object',
    allOf: [
      ref('Product'),
      obj({
        analysis_result: obj({ report_id: str }),
        description: str,
        has_guided: bool,
      }),
    ],
  },
  Report: report,
  Category: category,
  CategoryTree: obj({ category: ref('Category'), subcategories: arrayOf(ref('Category')) }, [
    'category',
  ]),
  UploadedFile: obj({ file_url: str, file_name: str }, ['file_url', 'file_name']),
};

/** The `data` of each operation's success answer, by operation id. */
export const SUCCESS_DATA: Record<string, Schema> = {
  'apikey.create': obj({ api_key: str }, ['api_key']),
  'apikey.delete': ref('Empty'),
  'apikey.list': paged(ref('ApiKey')),
  'calls.filter_values': ref('FilterValues'),
  'calls.list': paged(ref('CallRecord')),
  'team.list': paged(ref('Team')),
  'team.info': ref('Team'),
  'agent.list': paged(ref('Agent')),
  'agent.info': ref('Agent'),
  'session.create': obj({ session_id: str }, ['session_id']),
  'session.info': ref('Session'),
  'session.rename': ref('Empty'),
  'session.messages': ref('MessageList'),
  'session.messages_between': {
    type: ['array', 'object'],
    oneOf: [arrayOf(ref('Message')), ref('MessageList')],
  },
  'browser.info': ref('Browser'),
  'browser.list': obj({ browsers: arrayOf(ref('Browser')), total: int }, ['browsers']),
  'browser.release': ref('Empty'),
  'browser.pages': obj({ pages: arrayOf(ref('BrowserPage')), total: int }, ['pages']),
  'session.marketing_data': { type: 'object' },
  'session.upload': arrayOf(ref('UploadedFile')),
  'product.create': ref('Product'),
  'product.info': ref('ProductInfo'),
  'product.query_results': {
    description: 'Posts with their counts and media, as the platform gives them.',
  },
  'report.info': ref('Report'),
  'report.update': { type: 'object' },
  'report.categories': arrayOf(ref('CategoryTree')),
};
