import { describe, expect, it } from 'vitest';
import { dataTextOf, envelopeOf, failure, success } from './result';

const dataOf = (text: string) => {
  const envelope = envelopeOf(text);
  if (!envelope) throw new Error('not an envelope');
  return dataTextOf(text, envelope);
};

describe('the data of a success, as its text', () => {
  it('is taken as sent from the platform’s envelope, whatever the message holds', () => {
    const data = '{"page_num":1,"data":[{"name":"a \\"quoted\\" \\\\ name","data":{"x":1}}]}';
    expect(dataOf(`{"code":0,"msg":"Success","data":${data}}`)).toBe(data);
    expect(dataOf(`{"code":0,"msg":"say \\"ok\\", \\\\","data":${data}}\n`)).toBe(data);
    expect(dataOf('{"code":0,"msg":"Success","data":[1,2]}')).toBe('[1,2]');
    expect(dataOf('{"code":0,"msg":"Success","data":null}')).toBe('null');
  });

  it('is serialized when the envelope has another form, so nothing after data is taken with it', () => {
    expect(dataOf('{"code":0,"msg":"Success","data":{"a":1},"isError":true}')).toBe('{"a":1}');
    expect(dataOf('{ "code": 0, "msg": "Success", "data": {"a": 1} }')).toBe('{"a":1}');
    expect(dataOf('{"msg":"Success","code":0,"data":{"a":1}}')).toBe('{"a":1}');
    expect(dataOf('{"code":0,"msg":"Success"}')).toBe('null');
  });
});

describe('tool results', () => {
  it('carry the data as structured content and as text, in either era', () => {
    const modern = JSON.parse(success('{"a":[1]}', 'req-1', true, { 'apgw/cache': 'HIT' }));
    expect(modern).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: '{"a":[1]}' }],
      structuredContent: { a: [1] },
      _meta: { 'apgw/request_id': 'req-1', 'apgw/cache': 'HIT' },
    });
    expect(modern._meta['io.modelcontextprotocol/serverInfo'].name).toBe('agent-platform-gateway');
    // 2025-era structured content is an object: a list is text only.
    const legacy = JSON.parse(success('[1,2]', 'req-2', false, {}));
    expect(legacy).toEqual({
      content: [{ type: 'text', text: '[1,2]' }],
      _meta: { 'apgw/request_id': 'req-2' },
    });
  });

  it('say a failure’s code, message and request id, and when to retry', () => {
    const envelope = { code: 42900, msg: 'Rate limit "burst" exceeded; retry in 3 s', data: {} };
    const result = JSON.parse(failure(envelope, 'req-3', false, '3', {}));
    expect(result.isError).toBe(true);
    const [said, json] = result.content[0].text.split('\n');
    expect(said).toBe(
      'Error 42900: Rate limit "burst" exceeded; retry in 3 s (request_id req-3). Retry after 3 s.',
    );
    expect(JSON.parse(json)).toEqual(envelope);
  });
});
