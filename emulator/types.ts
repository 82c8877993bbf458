// Wire shapes of the Agent Platform Service (spec section 2), plus the
// emulator's internal account record. Field names follow the spec exactly.

export interface Model {
  system_model_id: string;
  user_id: string;
  provider: string;
  model_type: string;
  base_url: string;
  api_key: string; // always "" in responses: the platform hides it
  icon_url: string;
  created_at: string;
  updated_at: string;
}

export interface Agent {
  agent_id: string;
  user_id: string;
  avatar: string;
  name: string;
  description: string;
  system_message: string;
  component_type: string;
  agent_type: string;
  model: Model;
  parameters: { system_prompt_role: string; system_prompt_task_skill: string; temperature: number };
  created_at: string;
  updated_at: string;
}

export interface Team {
  team_id: string;
  user_id: string;
  avatar: string;
  name: string;
  description: string;
  component_type: string;
  team_type: string;
  agents: Agent[];
  termination: string;
  model: Model;
  parameters: {
    system_prompt_role: string;
    system_prompt_task_skill: string;
    max_turns: number;
    temperature: number;
  };
  created_at: string;
  updated_at: string;
  deleted_at: number;
}

export interface CallRecord {
  session_id: string;
  api_key_name: string;
  browser_id: string;
  platform: string; // emulator extra: not in spec 2.8, but lets tests check the filter
  duration: number;
  auth_captcha: { has_used: boolean; used_count: number };
  ip_proxy_bandwidth: number;
  cost: {
    total_credit: number;
    server_traffic: number;
    token: number;
    browser: number;
    auto_captcha: number;
    ip_proxy_bandwidth: number;
  };
  status: string;
  created_at: string;
}

export interface Message {
  message_id: string;
  source: string;
  source_type: string;
  source_component: string;
  content: string;
  message: unknown;
  type: string;
  created_at: string;
  attachments: unknown[];
  session_round: number;
}

export interface Session {
  session_id: string;
  status: string;
  browser_id: string;
  team_id: string;
  intent_id: string;
  name: string;
  task: { role: string; content: string; metadata?: Record<string, unknown> }[];
  task_result: Record<string, unknown>;
  messages: Message[];
  duration: number;
  error_message: string;
  attachments: unknown[];
  platform: string;
  visibility: string;
  created_at: string;
  updated_at: string;
  /** The current client's session kind (e.g. marketing), when it named one: emulator extra. */
  mode?: string;
}

export interface BrowserPage {
  index: number;
  url: string;
  status: string;
  video_url: string;
  ws_debugger_url: string;
  front_debugger_url: string;
  page_id: string;
  debugger_host: string;
}

export interface Browser {
  browser_id: string;
  user_id: string;
  session_id: string;
  status: string;
  width: number;
  height: number;
  ws_endpoint: string;
  solve_captcha: boolean;
  timezone: string;
  user_agent: string;
  duration_seconds: number;
  created_at: string;
  pages: BrowserPage[];
}

export interface ApiKey {
  id: number;
  name: string;
  api_key: string;
  created_at: string;
  last_used_at: string;
}

/** Everything one platform account owns; accounts never share records. */
export interface Account {
  user_id: string;
  display_name: string;
  keys: ApiKey[];
  teams: Team[];
  calls: CallRecord[];
  sessions: Session[];
  browsers: Browser[];
  dashboard: Dashboard;
}

/** Every platform answer: `code` 0 and `msg` "Success" on success, `data` null on failure. */
export interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

/** The paged list wrapper of spec 2.1 (API keys, teams, call records, agents). */
export interface Paged<T> {
  page_num: number;
  page_size: number;
  total: number;
  total_page: number;
  data: T[];
}

/** 4.1: the new key. */
export interface NewApiKey {
  api_key: string;
}

/** 4.4: the values the call-history filters accept. */
export interface FilterValues {
  api_key_names: string[];
  platforms: string[];
  states: string[];
}

/** 4.8: POST /session/create. */
export interface NewSession {
  session_id: string;
}

/** 4.8: GET /session/message/lists. */
export interface MessagePage {
  messages: Message[];
  total_count: number;
  has_next: boolean;
  has_prev: boolean;
  page_num: number;
  page_size: number;
  total_page: number;
}

/** 4.8: GET /browser/lists. */
export interface BrowserList {
  browsers: Browser[];
  total: number;
}

/** 4.8: GET /browser/page/lists. */
export interface BrowserPageList {
  pages: BrowserPage[];
  total: number;
}

/** A frame of the session event stream (WebSocket /session/ws/{session_id}), as JSON text. */
export type SessionFrame =
  | { type: 'session.snapshot'; session_id: string; status: string; message_count: number }
  | { type: 'message'; session_id: string; message: Message }
  | { type: 'session.status'; session_id: string; status: string };

// The current client's dashboard and uploads (PLATFORM.md, "What the platform's current
// client does", version 0.3.2). Ids here are opaque strings, not UUIDs.

export interface Category {
  id: number;
  zh: string;
  en: string;
  en_desc: string;
  level: number;
}

/** GET /dashboard/categories: one top-level category and its subcategories. */
export interface CategoryTree {
  category: Category;
  subcategories: Category[];
}

/** POST /dashboard/product/create. */
export interface NewProduct {
  product_id: string;
  product_name: string;
  status: 'pending' | 'completed';
}

/** GET /dashboard/product/candidates/{product_id}/info. */
export interface ProductInfo extends NewProduct {
  analysis_result: { report_id: string };
  description: string;
  has_guided: boolean;
}

export interface Report {
  report_id: string;
  product_name: string;
  target_description: string;
  keywords: string[];
  user_personas: unknown[];
  user_profiles: unknown[];
  competitors: unknown[];
  recommended_campaigns: { name: string; description: string }[];
  related_links: string[];
  related_industries: { level1: { id: number }; level2: number[] }[];
}

/** One post of a research query's results. */
export interface Post {
  post_id: string;
  author: string;
  content: string;
  url: string;
  created_at: string;
  counts: { reply: number; like: number; retweet: number; view: number };
  media: { type: 'image' | 'video'; url: string }[];
}

export interface UploadedFile {
  file_url: string;
  file_name: string;
}

/** An account's dashboard: products (with how often each was read), reports, query results. */
export interface Dashboard {
  products: { info: ProductInfo; reads: number }[];
  reports: Report[];
  queries: Map<string, Post[]>;
  uploads: UploadedFile[];
}
