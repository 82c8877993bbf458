// The demo page's whole logic: get a browser token from our backend, then
// call the gateway directly (CORS) and open the session event stream.
const demo = { gateway: '', token: '', teams: [] };
window.demo = demo;

const $ = (id) => document.getElementById(id);
const showError = (text) => {
  $('error').textContent = text;
};

async function config() {
  demo.gateway = (await (await fetch('/config.json')).json()).gateway_url;
}

demo.getToken = async (ttl) => {
  showError('');
  const res = await fetch(`/api/browser-token${ttl ? `?ttl=${ttl}` : ''}`, { method: 'POST' });
  const body = await res.json();
  if (body.code !== 0) return showError(`Could not get a token: ${body.msg} (code ${body.code})`);
  demo.token = body.data.token;
  $('token-status').textContent =
    `browser token for ${body.data.origin}, scopes ${body.data.scopes.join(' ')}, expires ${body.data.expires_at}`;
  $('list-teams').disabled = false;
};

async function gateway(path, init = {}) {
  const headers = {
    authorization: `Bearer ${demo.token}`,
    ...(init.body ? { 'content-type': 'application/json' } : {}),
  };
  const res = await fetch(demo.gateway + path, { ...init, headers });
  const body = await res.json();
  if (body.code !== 0)
    throw new Error(`${body.msg} (code ${body.code}, request ${res.headers.get('x-request-id')})`);
  return body.data;
}

demo.listTeams = async () => {
  showError('');
  try {
    const page = await gateway('/team/lists?page_size=5');
    demo.teams = page.data;
    $('teams').replaceChildren(
      ...page.data.map((t) =>
        Object.assign(document.createElement('li'), {
          textContent: `${t.name} (${t.agents.length} agent${t.agents.length === 1 ? '' : 's'})`,
        }),
      ),
    );
    $('create-session').disabled = page.data.length === 0;
  } catch (err) {
    showError(err.message);
  }
};

demo.createSession = async () => {
  showError('');
  try {
    const { session_id } = await gateway('/session/create', {
      method: 'POST',
      body: JSON.stringify({
        team_id: demo.teams[0].team_id,
        task: 'Summarise today\u2019s news',
        title: 'Browser demo',
      }),
    });
    $('session-id').textContent = session_id;
    watch(session_id);
  } catch (err) {
    showError(err.message);
  }
};

function watch(sessionId) {
  $('events').replaceChildren();
  const url = `${demo.gateway.replace(/^http/, 'ws')}/session/ws/${encodeURIComponent(sessionId)}`;
  // Browsers cannot set headers on a WebSocket: the token rides as a subprotocol.
  const ws = new WebSocket(url, ['apgw', demo.token]);
  $('stream-status').textContent = 'connecting';
  ws.onopen = () => {
    $('stream-status').textContent = 'live';
  };
  ws.onmessage = (event) => {
    const frame = JSON.parse(event.data);
    const text =
      frame.type === 'message'
        ? `${frame.message.source}: ${frame.message.content}`
        : `${frame.type} ${frame.status ?? ''}`;
    $('events').append(Object.assign(document.createElement('li'), { textContent: text }));
    if (frame.type === 'session.status') $('stream-status').textContent = frame.status;
  };
  ws.onclose = (event) => {
    if ($('stream-status').textContent !== 'completed')
      $('stream-status').textContent = `closed (${event.code})`;
  };
}

$('get-token').onclick = () => demo.getToken();
$('list-teams').onclick = () => demo.listTeams();
$('create-session').onclick = () => demo.createSession();
config().catch((err) => showError(`Cannot load the demo configuration: ${err.message}`));
